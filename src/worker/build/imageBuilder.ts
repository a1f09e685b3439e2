/**
 * Builds one derived image with buildah and pushes it to the registry, reading the digest back: a
 * digest is reported only after the push succeeded and the registry answered that manifest. Runs
 * with runc and explicit ulimits (containers on cgroups-v1 hosts refuse the defaults).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logTail } from "../../kernel/imageBuild.js";
import type { BuildJob } from "../buildWorkerWire.js";
import { writeBuildContext } from "./buildRecipe.js";

export interface RegistryTarget {
  /** `host:port` of the registry (the build worker's configuration only). */
  address: string;
  /** The repository images are pushed to, e.g. `awaken/environments`. */
  repository: string;
  tlsVerify: boolean;
  /** A containers-auth.json file with the registry credentials; passed by path, never read here. */
  authFile?: string | undefined;
}

export interface BuilderOptions {
  registry: RegistryTarget;
  /** `awaken-build-<host>-<pid>-<start>`: names what buildah makes for this worker (builderInstance.ts). */
  instance: string;
  runtime: string;
  /** `nofile` and `nproc` soft:hard, at or below this host's hard limits. */
  ulimits: string[];
  timeoutMs: number;
}

export type BuildResult =
  | { kind: "ready"; digest: string; imageReference: string; logTail: string }
  | { kind: "failed"; error: string; logTail: string }
  /** The image built but the registry did not take it (down, refusing): hand it back, try later. */
  | { kind: "registry_unavailable"; reason: string };

/** Builds, pushes and reads back `job`; `signal` aborts (a lost lease, SIGTERM). */
export async function buildImage(
  job: BuildJob,
  options: BuilderOptions,
  signal: AbortSignal,
): Promise<BuildResult> {
  const dir = mkdtempSync(join(tmpdir(), `${options.instance}-`));
  // The base under this worker's name: buildah names the working container after it, so a worker
  // started after this one was killed can tell that container is a leftover (buildLeftovers.ts).
  const from = `localhost/${options.instance}:from-${job.buildId}-${job.epoch}`;
  const local = `localhost/${options.instance}:${job.buildId}-${job.epoch}`;
  const { address, repository, tlsVerify, authFile } = options.registry;
  const remote = `${address}/${repository}:${job.buildId}`;
  const tls = `--tls-verify=${tlsVerify}`;
  const auth = authFile ? ["--authfile", authFile] : [];
  const log: string[] = [];
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const both = AbortSignal.any([signal, deadline]);
  let pushing = false;
  let tagged = false;
  try {
    writeBuildContext(join(dir, "context"), job.baseImage, job.resolution);
    const ulimits = options.ulimits.flatMap((u) => ["--ulimit", u]);
    await run("buildah", ["tag", job.baseImage, from], log, both);
    tagged = true;
    // The RUN steps fetch the lockfile's tarballs: the build shares the worker's network.
    await run(
      "buildah",
      [
        "--runtime",
        options.runtime,
        "bud",
        ...ulimits,
        "--network",
        "host",
        "--pull=never",
        "--from",
        from,
        // The image names its real base, not the alias it was built from.
        "--annotation",
        `org.opencontainers.image.base.name=${job.baseImage}`,
        "-t",
        local,
        "-f",
        join(dir, "context", "Containerfile"),
        join(dir, "context"),
      ],
      log,
      both,
    );
    const digestFile = join(dir, "digest");
    pushing = true;
    await run(
      "buildah",
      ["push", tls, ...auth, "--digestfile", digestFile, local, `docker://${remote}`],
      log,
      both,
    );
    const pushed = readFileSync(digestFile, "utf8").trim();
    // Read back: the registry must answer that very manifest before anyone is told about it.
    const inspected = JSON.parse(
      await run(
        "skopeo",
        ["inspect", tls, ...auth, "--raw", `docker://${address}/${repository}@${pushed}`],
        [],
        both,
      ),
    ) as unknown;
    if (typeof inspected !== "object" || inspected === null)
      throw new Error("the registry did not answer the manifest");
    if (!/^sha256:[a-f0-9]{64}$/.test(pushed)) throw new Error("the push reported no manifest digest");
    return {
      kind: "ready",
      digest: pushed,
      imageReference: `${address}/${repository}@${pushed}`,
      logTail: logTail(log.join("")),
    };
  } catch (error) {
    if (signal.aborted) throw error;
    if (pushing && !deadline.aborted)
      return { kind: "registry_unavailable", reason: (error as Error).message.slice(0, 300) };
    const reason = deadline.aborted
      ? `the build ran out of time (${Math.round(options.timeoutMs / 1000)} s)`
      : (error as Error).message;
    return { kind: "failed", error: reason.slice(0, 1_000), logTail: logTail(log.join("")) };
  } finally {
    await run("buildah", ["rmi", "-f", local], [], AbortSignal.timeout(30_000)).catch(() => {});
    // Not -f: the alias is one more name of the base image, and only the alias goes.
    if (tagged) await run("buildah", ["rmi", from], [], AbortSignal.timeout(30_000)).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a command, appending its output to `log`; rejects on a non-zero exit or on `signal`. */
function run(command: string, args: string[], log: string[], signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error(`${command} aborted`));
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c;
      log.push(c.toString());
    });
    child.stderr.on("data", (c: Buffer) => log.push(c.toString()));
    const abort = () => child.kill("SIGKILL");
    signal.addEventListener("abort", abort, { once: true });
    child.on("error", (e) => {
      signal.removeEventListener("abort", abort);
      reject(e);
    });
    child.on("close", (code) => {
      signal.removeEventListener("abort", abort);
      if (signal.aborted) reject(new Error(`${command} aborted`));
      else if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args[0] === "--runtime" ? args[2] : args[0]} exited ${code}`));
    });
  });
}
