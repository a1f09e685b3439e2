/**
 * How a bwrap sandbox's memory is bounded on this host, decided once per provider:
 *
 * - `cgroup-v2` / `cgroup-v1`: one memory cgroup per sandbox (its live bwrap, restarts and
 *   one-shots alike), a child of the worker's own cgroup (or of the operator's `cgroupParent`).
 *   It bounds the sum of every process of the sandbox, page cache and tmpfs included; swap is
 *   capped too. Going over gets the kernel's OOM killer inside that cgroup only: the command dies,
 *   the host and the worker stay fine, and the exec is reported as having hit the limit.
 * - `rlimit`: the fallback where no writable memory cgroup exists (a worker that is not root and
 *   has no delegated cgroup): RLIMIT_DATA (writable private mappings, counted with mmap since
 *   Linux 4.7) set per process. It bounds each process, not their sum: N processes may use N times
 *   the limit (RLIMIT_NPROC bounds N). An allocation past it fails inside the command (ENOMEM).
 *
 * A host that offers neither (no cgroup and a kernel before 4.7) refuses the tier at start-up.
 */
import { mkdir, readdir, readFile, rmdir, writeFile } from "node:fs/promises";
import { release } from "node:os";
import { join } from "node:path";
import { SandboxUnavailableError } from "./ports.js";

export type MemoryEnforcement = "cgroup-v2" | "cgroup-v1" | "rlimit";

export interface MemoryPlan {
  enforcement: MemoryEnforcement;
  /** The directory sandbox cgroups are created in (cgroup modes). */
  parent?: string;
}

/** One sandbox's memory cgroup. */
export interface SandboxCgroup {
  /** Moves a process (the launcher, before it starts bwrap) into the cgroup. */
  add(pid: number): Promise<void>;
  /** OOM kills inside the cgroup so far. */
  oomKills(): Promise<number>;
  /** Highest usage seen, when the kernel reports it. */
  peakBytes(): Promise<number | null>;
  /** Removes the (by then empty) cgroup; retries while the last processes go. */
  remove(): Promise<void>;
}

const V2_MOUNT = "/sys/fs/cgroup";
const V1_MOUNT = "/sys/fs/cgroup/memory";

/** Overridable for tests: where the cgroup filesystems are, and this process's membership. */
export interface CgroupHost {
  v2Mount: string;
  v1Mount: string;
  selfCgroup: () => Promise<string>;
  pid: number;
}

const REAL_HOST: CgroupHost = {
  v2Mount: V2_MOUNT,
  v1Mount: V1_MOUNT,
  selfCgroup: () => readFile("/proc/self/cgroup", "utf8"),
  pid: process.pid,
};

/**
 * Chooses how memory is bounded. `required` is the operator's demand (`cgroup`: refuse to run
 * without one); `cgroupParent` a delegated cgroup to create sandboxes under.
 */
export async function planMemory(
  options: { required?: "cgroup" | "rlimit" | "auto"; cgroupParent?: string } = {},
  host: CgroupHost = REAL_HOST,
): Promise<MemoryPlan> {
  const required = options.required ?? "auto";
  if (required !== "rlimit") {
    const membership = await host.selfCgroup().catch(() => "");
    const v2 = await usableV2(options.cgroupParent ?? v2Own(membership, host), host);
    if (v2) return { enforcement: "cgroup-v2", parent: v2 };
    const v1 = await usableV1(options.cgroupParent ?? v1Own(membership, host));
    if (v1) return { enforcement: "cgroup-v1", parent: v1 };
    if (required === "cgroup") {
      throw new SandboxUnavailableError(
        "bwrap",
        "no writable memory cgroup for sandboxes: run the worker as root or give it a delegated cgroup v2 " +
          "with the memory controller (AWAKEN_SANDBOX_CGROUP), or allow the per-process fallback",
      );
    }
  }
  if (!kernelAtLeast(4, 7)) {
    throw new SandboxUnavailableError(
      "bwrap",
      "this host can bound sandbox memory neither with a cgroup (none writable) nor with RLIMIT_DATA " +
        `(Linux ${release()} counts only brk in it; 4.7 or later is needed)`,
    );
  }
  return { enforcement: "rlimit" };
}

/** Creates one sandbox's cgroup with its limits (cgroup modes only). */
export async function createSandboxCgroup(
  plan: MemoryPlan,
  name: string,
  limits: { memoryBytes: number; processes: number },
): Promise<SandboxCgroup> {
  if (plan.parent === undefined) throw new Error("no cgroup in the rlimit mode");
  const dir = join(plan.parent, name);
  await mkdir(dir);
  try {
    if (plan.enforcement === "cgroup-v2") {
      await writeFile(join(dir, "memory.max"), String(limits.memoryBytes));
      await writeFile(join(dir, "memory.swap.max"), "0").catch(() => {});
      await writeFile(join(dir, "pids.max"), String(limits.processes)).catch(() => {});
    } else {
      await writeFile(join(dir, "memory.limit_in_bytes"), String(limits.memoryBytes));
      // Without swap accounting the file is absent; with it, swap would be room past the limit.
      await writeFile(join(dir, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes)).catch(() => {});
    }
  } catch (error) {
    await rmdir(dir).catch(() => {});
    throw error;
  }
  return new CgroupDirectory(dir, plan.enforcement === "cgroup-v2");
}

/** The prefix of every sandbox cgroup, followed by the creating worker's pid. */
export const CGROUP_PREFIX = "awaken-sandbox-";

/**
 * Removes the cgroups a crashed earlier worker left (their sandboxes died with it: bwrap's
 * --die-with-parent), so that they do not pile up. Those of live processes are kept.
 */
export async function sweepStaleCgroups(plan: MemoryPlan): Promise<void> {
  if (plan.parent === undefined) return;
  const names = await readdir(plan.parent).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(CGROUP_PREFIX)) continue;
    const pid = Number.parseInt(name.slice(CGROUP_PREFIX.length), 10);
    if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    await rmdir(join(plan.parent, name)).catch(() => {});
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

class CgroupDirectory implements SandboxCgroup {
  constructor(
    private readonly dir: string,
    private readonly v2: boolean,
  ) {}

  add(pid: number): Promise<void> {
    return writeFile(join(this.dir, "cgroup.procs"), String(pid));
  }

  async oomKills(): Promise<number> {
    const text = await readFile(
      join(this.dir, this.v2 ? "memory.events" : "memory.oom_control"),
      "utf8",
    ).catch(() => "");
    const match = /^oom_kill (\d+)$/m.exec(text);
    return match ? Number(match[1]) : 0;
  }

  async peakBytes(): Promise<number | null> {
    const file = this.v2 ? "memory.peak" : "memory.max_usage_in_bytes";
    const text = await readFile(join(this.dir, file), "utf8").catch(() => "");
    return /^\d+/.test(text) ? Number.parseInt(text, 10) : null;
  }

  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt += 1) {
      try {
        await rmdir(this.dir);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return;
        if (code !== "EBUSY") throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }
}

/** This process's cgroup v2 directory, from `0::/path`. */
function v2Own(membership: string, host: CgroupHost): string | undefined {
  const match = /^0::(\/.*)$/m.exec(membership);
  return match ? join(host.v2Mount, match[1]!) : undefined;
}

function v1Own(membership: string, host: CgroupHost): string | undefined {
  const match = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(\/.*)$/m.exec(membership);
  return match ? join(host.v1Mount, match[1]!) : undefined;
}

/**
 * A v2 parent whose children get the memory controller. A cgroup that holds processes cannot
 * enable controllers for its children (no internal processes), so when the parent is this
 * worker's own cgroup, the worker first moves itself into a leaf of it (`awaken-worker`), as a
 * delegated service is expected to.
 */
async function usableV2(parent: string | undefined, host: CgroupHost): Promise<string | undefined> {
  if (parent === undefined) return undefined;
  const controllers = await readFile(join(parent, "cgroup.controllers"), "utf8").catch(() => "");
  if (!controllers.split(/\s+/).includes("memory")) return undefined;
  const wanted = controllers.split(/\s+/).includes("pids") ? "+memory +pids" : "+memory";
  const enabled = async () =>
    (await readFile(join(parent, "cgroup.subtree_control"), "utf8").catch(() => ""))
      .split(/\s+/)
      .includes("memory");
  if (await enabled()) return parent;
  try {
    await writeFile(join(parent, "cgroup.subtree_control"), wanted);
  } catch {
    try {
      const leaf = join(parent, "awaken-worker");
      await mkdir(leaf, { recursive: true });
      await writeFile(join(leaf, "cgroup.procs"), String(host.pid));
      await writeFile(join(parent, "cgroup.subtree_control"), wanted);
    } catch {
      return undefined;
    }
  }
  return (await enabled()) ? parent : undefined;
}

/** A v1 memory cgroup this worker can create children in. */
async function usableV1(parent: string | undefined): Promise<string | undefined> {
  if (parent === undefined) return undefined;
  const probe = join(parent, `awaken-probe-${process.pid}`);
  try {
    await mkdir(probe);
  } catch {
    return undefined;
  }
  const ok = await readFile(join(probe, "memory.limit_in_bytes"), "utf8").then(
    () => true,
    () => false,
  );
  await rmdir(probe).catch(() => {});
  return ok ? parent : undefined;
}

function kernelAtLeast(major: number, minor: number): boolean {
  const [a = 0, b = 0] = release()
    .split(".")
    .map((part) => Number.parseInt(part, 10));
  return a > major || (a === major && b >= minor);
}
