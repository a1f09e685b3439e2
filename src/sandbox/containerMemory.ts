import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import type { SandboxCgroup } from "./sandboxMemory.js";

const run = promisify(execFile);

/**
 * How many processes the kernel's OOM killer killed in a container's memory cgroup (podman
 * `--memory`), so an exec that went over the limit says so (sandboxLimits.ts). The cgroup is found
 * from the container's init, as the host sees it: `/proc/<pid>/cgroup` (cgroups v1: the `memory`
 * line, v2: the unified one), then `memory.oom_control` (v1) or `memory.events` (v2).
 */
export async function containerOomFile(
  podmanPath: string,
  name: string,
  env: NodeJS.ProcessEnv,
  /** podman's global options naming the container's store (containerStorage.ts). */
  storageArgs: readonly string[] = [],
): Promise<string> {
  const { stdout } = await run(podmanPath, [...storageArgs, "inspect", "--format", "{{.State.Pid}}", name], {
    env,
    timeout: 10_000,
  });
  const pid = Number(stdout.trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`the container ${name} is not running`);
  const membership = await readFile(`/proc/${pid}/cgroup`, "utf8");
  const v1 = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/m.exec(membership)?.[1];
  return v1 !== undefined
    ? `/sys/fs/cgroup/memory${v1}/memory.oom_control`
    : `/sys/fs/cgroup${/^0::(.*)$/m.exec(membership)?.[1] ?? "/"}/memory.events`;
}

/** The `oom_kill` count of a file `containerOomFile` named. */
export async function readOomKills(file: string): Promise<number> {
  const text = await readFile(file, "utf8");
  return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
}

/**
 * The container tier's side of `SandboxLimitWatch.cgroup`: OOM kills of whichever container the
 * sandbox runs now (`current`); unknown (a container gone meanwhile) reads as none. Processes are
 * put in it by podman, and podman removes it: `add` and `remove` do nothing.
 */
export function containerCgroup(current: () => Promise<number>): SandboxCgroup {
  return {
    add: async () => {},
    oomKills: () => current().catch(() => 0),
    peakBytes: async () => null,
    remove: async () => {},
  };
}
