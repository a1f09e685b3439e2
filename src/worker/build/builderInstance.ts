/**
 * The name a build worker process gives everything buildah makes for it on this host: the base
 * image's alias (and so the working container buildah names after it), the built image's tag and
 * the build context. It names the host and the process (pid and start time, so a reused pid is not
 * mistaken for it), which lets a later worker tell a killed worker's leftovers from a live one's.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

export const BUILDER_NAME_PREFIX = "awaken-build-";

export interface BuilderInstance {
  /** First 8 hex of sha256(hostname): another host's leftovers are never this worker's to judge. */
  host: string;
  pid: number;
  /** The process's start, in clock ticks since boot (/proc/<pid>/stat); 0 where there is no /proc. */
  start: number;
}

/** `awaken-build-<host>-<pid>-<start>`: an image repository name and a container name prefix. */
export function instanceName(instance: BuilderInstance): string {
  return `${BUILDER_NAME_PREFIX}${instance.host}-${instance.pid}-${instance.start}`;
}

/** This process. */
export function currentInstance(): BuilderInstance {
  return { host: hostTag(), pid: process.pid, start: processStart(process.pid) ?? 0 };
}

export function hostTag(): string {
  return createHash("sha256").update(hostname()).digest("hex").slice(0, 8);
}

/** Parses `awaken-build-<host>-<pid>-<start>` at the start of `name` (a container or image name). */
export function instanceOf(name: string): BuilderInstance | null {
  const match = /^awaken-build-([0-9a-f]{8})-([0-9]{1,10})-([0-9]{1,20})(?:$|[-:/])/.exec(name);
  if (!match) return null;
  return { host: match[1] as string, pid: Number(match[2]), start: Number(match[3]) };
}

/** True when the process that named `instance` still runs on this host (same pid, same start). */
export function instanceAlive(instance: BuilderInstance): boolean {
  if (instance.host !== hostTag()) return true;
  try {
    process.kill(instance.pid, 0);
  } catch (error) {
    // EPERM: a process runs there, another user's; not ours to judge as dead.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  const start = processStart(instance.pid);
  return start === null || start === instance.start;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function processStart(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const start = Number(fields[19]);
    return Number.isSafeInteger(start) ? start : null;
  } catch {
    return null;
  }
}
