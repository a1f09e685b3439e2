/**
 * One exec of a bwrap sandbox, held to its memory limit and its workspace's disk quota: what went
 * over is said in the result (`limitHit`), as a tool error the model reads, never as a failure
 * of the worker. The limits themselves are enforced by the kernel (the sandbox's cgroup, or
 * RLIMIT_DATA; RLIMIT_FSIZE) and by the quota's watch (workspaceQuota.ts).
 */
import type { ExecRequest, ExecResult } from "./ports.js";
import type { SandboxCgroup } from "./sandboxMemory.js";
import { QuotaExceeded, type WorkspaceQuota, type WorkspaceUsage } from "./workspaceQuota.js";

export interface SandboxLimitWatch {
  /** null: memory is bounded per process (RLIMIT_DATA), and the kernel does not tell. */
  cgroup: SandboxCgroup | null;
  memoryBytes: number;
  quota: WorkspaceQuota;
}

/** What a program says when an allocation fails under RLIMIT_DATA. */
const ALLOCATION_FAILED =
  /out of memory|cannot allocate memory|memoryerror|bad_alloc|allocation failed|heap out of memory/i;

export async function execWithinLimits(
  watch: SandboxLimitWatch,
  request: ExecRequest,
  run: (request: ExecRequest) => Promise<ExecResult>,
): Promise<ExecResult> {
  const stop = new AbortController();
  const guarded = { ...request, signal: AbortSignal.any([request.signal, stop.signal]) };
  const oomBefore = watch.cgroup ? await watch.cgroup.oomKills() : 0;
  const memoryHit = async () => (watch.cgroup ? (await watch.cgroup.oomKills()) > oomBefore : false);
  let result: ExecResult;
  let over: WorkspaceUsage | null;
  try {
    ({ result, over } = await watch.quota.watch(stop, () => run(guarded)));
  } catch (error) {
    const reason: unknown = stop.signal.reason;
    if (!request.signal.aborted && reason instanceof QuotaExceeded) {
      result = { stdout: "", stderr: "", exitCode: null, timedOut: false, truncated: false };
      over = reason.usage;
    } else if (!request.signal.aborted && (await memoryHit())) {
      // The kernel killed the supervisor itself: the sandbox is restarted by the next command.
      result = { stdout: "", stderr: "", exitCode: null, timedOut: false, truncated: false };
      over = null;
    } else {
      throw error;
    }
  }
  const hits: string[] = [];
  // A command that succeeded is not blamed for a kill in the cgroup (a command run beside it).
  if (result.exitCode !== 0 && (await memoryHit())) {
    hits.push(
      `the sandbox's memory limit (${formatBytes(watch.memoryBytes)}) was reached: the kernel killed the process that went over it`,
    );
  } else if (!watch.cgroup && result.exitCode !== 0 && ALLOCATION_FAILED.test(result.stderr)) {
    hits.push(`each process of this sandbox may use at most ${formatBytes(watch.memoryBytes)} of memory`);
  }
  const stopped = stop.signal.aborted ? " and the command was stopped" : "";
  const { limits } = watch.quota;
  if (over !== null && over.bytes > limits.bytes) {
    hits.push(
      `the workspace's disk quota (${formatBytes(limits.bytes)}) was exceeded: it holds ` +
        `${formatBytes(over.bytes)}${stopped}; delete files before writing more`,
    );
  }
  if (over !== null && over.inodes > limits.inodes) {
    hits.push(
      `the workspace's file limit (${limits.inodes} files and directories) was exceeded: it holds ` +
        `${over.inodes}${stopped}; delete files before creating more`,
    );
  }
  return hits.length === 0 ? result : { ...result, limitHit: hits.join("; ") };
}

export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ["GiB", 2 ** 30],
    ["MiB", 2 ** 20],
    ["KiB", 2 ** 10],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}
