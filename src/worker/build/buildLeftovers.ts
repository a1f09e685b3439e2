/**
 * What a build worker killed outright (SIGKILL, OOM) leaves on its host: buildah's working container
 * of the build it was running (with the runtime's state of a RUN step in flight), the base image's
 * alias, a built image not yet removed, and the build context. A worker removes these at start-up,
 * only those named by a build worker of this host that no longer runs (builderInstance.ts): never
 * another container, never a live worker's.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { type BuilderInstance, instanceAlive, instanceOf } from "./builderInstance.js";

const exec = promisify(execFile);
const TOOL_TIMEOUT_MS = 30_000;

export interface RemovedLeftovers {
  containers: number;
  images: number;
  contexts: number;
  /** Removals that failed (logged by the caller; the worker starts anyway). */
  failures: string[];
}

async function tool(command: string, args: string[]): Promise<string> {
  const { stdout } = await exec(command, args, { timeout: TOOL_TIMEOUT_MS, maxBuffer: 16 * 2 ** 20 });
  return stdout;
}

/**
 * Removes dead build workers' leftovers; `runtime` is the OCI runtime buildah ran RUN steps with.
 * `only` narrows it further (a test cleans up after the one worker it killed).
 */
export async function removeBuildLeftovers(
  runtime: string,
  only: (instance: BuilderInstance) => boolean = () => true,
): Promise<RemovedLeftovers> {
  // A name made by a build worker of this host that is no longer running.
  const leftBehind = (name: string) => {
    const instance = instanceOf(name);
    return instance !== null && !instanceAlive(instance) && only(instance);
  };
  const removed: RemovedLeftovers = { containers: 0, images: 0, contexts: 0, failures: [] };
  const attempt = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
      return true;
    } catch (error) {
      removed.failures.push(`${what}: ${(error as Error).message.slice(0, 200)}`);
      return false;
    }
  };
  const containers = (JSON.parse((await tool("buildah", ["containers", "--all", "--json"])) || "[]") ??
    []) as Array<{ id: string; containername: string }>;
  const dead = containers.filter((c) => leftBehind(c.containername));
  if (dead.length > 0)
    await attempt("RUN steps", () => stopRunSteps(runtime, new Set(dead.map((c) => c.id.slice(0, 12)))));
  for (const container of dead) {
    if (await attempt(container.containername, () => tool("buildah", ["rm", container.id])))
      removed.containers++;
  }
  const images = (JSON.parse((await tool("buildah", ["images", "--json"])) || "[]") ?? []) as Array<{
    names?: string[] | null;
  }>;
  for (const image of images) {
    for (const name of image.names ?? []) {
      // Only the alias or the tag itself: an image with other names keeps them.
      if (!leftBehind(name.replace(/^localhost\//, ""))) continue;
      if (await attempt(name, () => tool("buildah", ["rmi", name]))) removed.images++;
    }
  }
  for (const entry of readdirSync(tmpdir())) {
    if (!leftBehind(entry)) continue;
    rmSync(join(tmpdir(), entry), { recursive: true, force: true });
    removed.contexts++;
  }
  return removed;
}

/**
 * A RUN step's runtime container outlives the killed buildah: it is found by the hostname buildah
 * gives it (the working container's short id), then killed and deleted with its bundle.
 */
async function stopRunSteps(runtime: string, shortIds: Set<string>): Promise<void> {
  const listed = (JSON.parse((await tool(runtime, ["list", "--format", "json"]).catch(() => "[]")) || "[]") ??
    []) as Array<{ id: string; bundle: string }>;
  for (const step of listed) {
    if (!step.id.startsWith("buildah-") || !basename(step.bundle).startsWith("buildah")) continue;
    let host: unknown;
    try {
      host = (JSON.parse(readFileSync(join(step.bundle, "config.json"), "utf8")) as { hostname?: unknown })
        .hostname;
    } catch {
      continue;
    }
    if (typeof host !== "string" || !shortIds.has(host)) continue;
    await tool(runtime, ["delete", "--force", step.id]);
    if (dirname(step.bundle) !== "/") rmSync(step.bundle, { recursive: true, force: true });
  }
}
