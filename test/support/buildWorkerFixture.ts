/**
 * The set-up of the build-worker end-to-end tests: an npm package served by a loopback npm registry
 * and its real lockfile, a base image carrying node and npm, Debian's docker-registry on loopback,
 * the built `awaken up` with a build worker token, and `awaken build-worker` child processes; a bash
 * call in a session and the session's internal facts, to check what a session of a built image ran.
 * `stop` ends every process and removes the registry, the base image and the scratch dir.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { ImageBuildService } from "../../src/coordinator/imageBuilds/imageBuildService.js";
import { PackageResolutionRecords } from "../../src/coordinator/packageResolutions.js";
import { systemClock } from "../../src/kernel/clock.js";
import { type PackageResolution, packageResolution } from "../../src/kernel/packageResolution.js";
import { SqlEnvironmentStore } from "../../src/stores/sql/sqlEnvironmentStore.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";
import { dockerRegistryMissing, type LoopbackRegistry, startDockerRegistry } from "./dockerRegistry.js";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "./fakeNpmRegistry.js";
import { buildSandboxImage, podmanMissing, type SandboxImage } from "./sandboxImage.js";
import { isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "./sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "./serverProcess.js";

const ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
export const FROZEN_PACKAGE = "awaken-frozen-fixture";
export const RUNC = "/usr/sbin/runc";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read by assertions only
export type Wire = Record<string, any>;

export interface BuildWorkerProcess {
  child: ChildProcess;
  /** Its stderr so far (its log). */
  log(): string;
  exited: Promise<unknown>;
}

export interface BuildWorkerFixture {
  dir: string;
  /** Serves the package's tarball to the builds' `npm ci`. */
  npm: FakeNpmRegistry;
  base: SandboxImage;
  /** Replaced by a test that restarts the registry; `stop` stops the current one. */
  registry: LoopbackRegistry;
  server: ServerProcess;
  /** The server's SQLite database, opened by the test too (internal facts are not on the wire). */
  db: SqliteHandle;
  records: PackageResolutionRecords;
  lockfile: Wire;
  /** The frozen resolution of `FROZEN_PACKAGE@1.2.3`; `name` makes another resolution of it. */
  resolution(name?: string): PackageResolution;
  /**
   * `awaken build-worker` against the server and the registry. `detached`: its own process group,
   * so a test can kill it with the buildah it started.
   */
  startBuildWorker(options?: { detached?: boolean; logLevel?: string }): BuildWorkerProcess;
  /** A container-tier environment listing `FROZEN_PACKAGE@1.2.3` on the base image. */
  environment(name: string): Promise<{ id: string }>;
  imageOf(environmentId: string): Promise<Wire>;
  /** Waits until the build settles (no timed assertion: the test's own timeout bounds it). */
  settled(environmentId: string): Promise<Wire>;
  /** Pulls `image` and reads the package's package.json inside it (the image is removed after). */
  packageJsonIn(image: string): Wire;
  /** Runs one bash command in a new session of `environmentId` and answers the tool's output. */
  bashInSession(environmentId: string, command: string): Promise<{ sessionId: string; text: string }>;
  /** A session's internal facts of `type` (not on the wire: read from the server's database). */
  internalFacts(sessionId: string, type: string): Wire[];
  stop(): Promise<void>;
}

export async function startBuildWorkerFixture(options: {
  apiKey: string;
  buildToken: string;
  /** More `awaken up` arguments (e.g. `--image-build-lease-s`, `--workers 0`). */
  serverArgs?: string[];
  /** More `awaken up` variables (e.g. `AWAKEN_WORKER_TOKEN` for remote workers). */
  serverEnv?: NodeJS.ProcessEnv;
}): Promise<BuildWorkerFixture> {
  const missing = podmanMissing() ?? dockerRegistryMissing();
  if (missing) throw new Error(`the build worker tests need: ${missing}`);
  const dir = mkdtempSync(join(tmpdir(), "awaken-buildworker-e2e-"));
  const workers: BuildWorkerProcess[] = [];
  let npm: FakeNpmRegistry | undefined;
  let base: SandboxImage | undefined;
  let server: ServerProcess | undefined;
  let db: SqliteHandle | undefined;
  const fixture = { dir, workers } as unknown as BuildWorkerFixture & { workers: BuildWorkerProcess[] };
  fixture.stop = async () => {
    for (const worker of workers) {
      const { child } = worker;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await worker.exited;
      }
    }
    await db?.close();
    if (server) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    await fixture.registry?.stop();
    await npm?.close();
    base?.remove();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const source = join(dir, "pkg");
    mkdirSync(source);
    writeFileSync(
      join(source, "package.json"),
      JSON.stringify({ name: FROZEN_PACKAGE, version: "1.2.3", main: "index.js" }),
    );
    writeFileSync(join(source, "index.js"), "module.exports = 'frozen';\n");
    execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
      cwd: source,
      env: { ...process.env, npm_config_offline: "true" },
      stdio: "ignore",
    });
    const tarball = join(dir, `${FROZEN_PACKAGE}-1.2.3.tgz`);
    npm = await startFakeNpmRegistry([{ name: FROZEN_PACKAGE, version: "1.2.3", tarball }]);
    fixture.npm = npm;
    // Resolve it once, as the preparing worker's npm did: the registry serves tarballs it announced.
    if (!(await fetch(`${npm.url}${FROZEN_PACKAGE}`)).ok) throw new Error("the npm registry did not answer");
    const bytes = readFileSync(tarball);
    const lockfile: Wire = {
      name: "awaken-environment",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { dependencies: { [FROZEN_PACKAGE]: "1.2.3" } },
        [`node_modules/${FROZEN_PACKAGE}`]: {
          version: "1.2.3",
          resolved: `${npm.url}${FROZEN_PACKAGE}/-/${FROZEN_PACKAGE}-1.2.3.tgz`,
          integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        },
      },
    };
    fixture.lockfile = lockfile;
    base = buildSandboxImage({ withNode: true });
    fixture.base = base;
    fixture.registry = await startDockerRegistry();
    server = await startServerProcess({
      dataDir: join(dir, "data"),
      apiKey: options.apiKey,
      env: {
        AWAKEN_ALLOWED_CONTAINER_IMAGES: base.reference,
        AWAKEN_BUILD_WORKER_TOKEN: options.buildToken,
        // The in-process workers pull the derived image by digest from the loopback registry.
        AWAKEN_CONTAINER_PULL: "missing",
        AWAKEN_CONTAINER_TLS_VERIFY: "false",
        ...options.serverEnv,
      },
      ...(options.serverArgs ? { args: options.serverArgs } : {}),
    });
    fixture.server = server;
    db = await openSqlite(join(dir, "data", "awaken.db"));
    fixture.db = db;
    fixture.records = new PackageResolutionRecords(
      new SqlEnvironmentStore(db.db),
      systemClock,
      new ImageBuildService(new SqlImageBuildStore(db.db), systemClock),
    );
  } catch (error) {
    await fixture.stop();
    throw error;
  }
  const live = server;
  const reference = base.reference;

  fixture.resolution = (name = "awaken-environment") =>
    packageResolution({
      format: 1,
      npm: { lockfile: { ...fixture.lockfile, name } as never },
      pip: null,
      unfrozen: [],
    });

  fixture.startBuildWorker = (worker = {}) => {
    const child = spawn(
      process.execPath,
      [
        ENTRY,
        "build-worker",
        ...["--coordinator-url", live.url, "--registry", fixture.registry.address],
        ...["--registry-tls-verify", "false", "--poll-ms", "100"],
      ],
      {
        env: {
          PATH: process.env.PATH,
          HOME: dir,
          // The same temp dir as this process: a test looks there for the workers' build contexts.
          TMPDIR: tmpdir(),
          AWAKEN_BUILD_WORKER_TOKEN: options.buildToken,
          AWAKEN_LOG_LEVEL: worker.logLevel ?? "warn",
          AWAKEN_LOG_FORMAT: "json",
        },
        stdio: ["ignore", "ignore", "pipe"],
        detached: worker.detached === true,
      },
    );
    let err = "";
    child.stderr?.on("data", (c) => {
      err += c;
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const started: BuildWorkerProcess = { child, log: () => err, exited };
    workers.push(started);
    return started;
  };

  fixture.environment = async (name) =>
    live.client.beta.environments.create({
      name,
      config: {
        type: "cloud",
        packages: { npm: [`${FROZEN_PACKAGE}@1.2.3`] },
        sandbox: { tier: "container", image: reference },
      } as never,
    });

  fixture.imageOf = async (id) =>
    ((await live.client.beta.environments.retrieve(id)) as never as Wire).awaken_image;

  fixture.settled = async (id) => {
    for (;;) {
      const image = await fixture.imageOf(id);
      if (image.status === "ready" || image.status === "failed") return image;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  fixture.packageJsonIn = (image) => {
    const pulled = spawnSync("podman", ["pull", "--tls-verify=false", image], { encoding: "utf8" });
    if (pulled.status !== 0) throw new Error(`podman pull ${image}: ${pulled.stderr}`);
    try {
      const run = spawnSync(
        "podman",
        [
          ...["--runtime", RUNC, "run", "--rm", "--network", "none"],
          ...["--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"],
          image,
          ...["cat", `/opt/awaken/packages/node_modules/${FROZEN_PACKAGE}/package.json`],
        ],
        { encoding: "utf8" },
      );
      if (run.status !== 0) throw new Error(`podman run ${image}: ${run.stderr}`);
      return JSON.parse(run.stdout) as Wire;
    } finally {
      spawnSync("podman", ["rmi", "--force", image]);
    }
  };

  fixture.bashInSession = async (environmentId, command) => {
    const agent = await live.client.beta.agents.create({
      name: "hands",
      model: MODEL,
      tools: [{ type: "agent_toolset_20260401" }] as never,
    });
    const session = await live.client.beta.sessions.create({
      agent: agent.id,
      environment_id: environmentId,
    });
    await live.client.beta.sessions.events.send(session.id, {
      events: [userMessage(`call bash ${JSON.stringify({ command })}`)],
    });
    const events = await waitForHistory(live.client, session.id, (h) => h.some(isEndTurnIdle), 120_000);
    const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
    return { sessionId: session.id, text: textOf(result) };
  };

  fixture.internalFacts = (sessionId, type) => {
    const reader = new Database(join(dir, "data", "awaken.db"), { readonly: true });
    try {
      const rows = reader
        .prepare("select body_json from events where session_id = ? and type = ? order by seq")
        .all(sessionId, type) as Array<{ body_json: string }>;
      return rows.map((r) => JSON.parse(r.body_json) as Wire);
    } finally {
      reader.close();
    }
  };
  return fixture;
}
