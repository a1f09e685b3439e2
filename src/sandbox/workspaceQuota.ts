/**
 * The disk quota of a session's workspace, by accounting: `du` of the workspace (bytes, and inodes:
 * files and directories) while a command runs (every `pollMs`) and once it has ended, and
 * RLIMIT_FSIZE capped at the byte quota, so no single file can outgrow it. Inodes are counted
 * because `du` charges an empty file nothing: without a bound on them a command could create
 * millions of empty files, and exhaust the inodes of the filesystem that also holds the database.
 * Chosen over the alternatives because it works the same for a worker that is root and one that is
 * not, keeps the workspace an ordinary directory (the warm pool hands a slot over with rename(2),
 * and a workspace survives a worker restart), and costs no memory: a sized tmpfs would hold every
 * workspace in RAM, and a loop-mounted image needs root, leaves mounts behind when a worker crashes
 * and cannot be renamed into place. The price: the bound is soft by what one command writes between
 * two measurements (at most `pollMs` of writing); a command that takes the workspace over its
 * quota is stopped and reported, and the workspace keeps what it wrote until the model deletes
 * something.
 */
import { execFile } from "node:child_process";
import { PlatformError } from "../kernel/errors.js";

export const QUOTA_POLL_MS = 1_000;

/** What a workspace holds: bytes of disk, and inodes (files, directories, links). */
export interface WorkspaceUsage {
  bytes: number;
  inodes: number;
}

/**
 * Bytes of disk and inodes the tree under `path` holds (hard links once, symlinks not followed, one
 * filesystem): two walks at once, as du counts one or the other.
 */
export async function workspaceUsage(path: string): Promise<WorkspaceUsage> {
  const [bytes, inodes] = await Promise.all([du(path, ["-B1"]), du(path, ["--inodes"])]);
  return { bytes, inodes };
}

function du(path: string, unit: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    // du exits 1 when an entry vanished during the walk (a command deleting files): the total stands.
    execFile("du", ["-s", "-x", ...unit, "--", path], { env: { LC_ALL: "C" } }, (error, stdout) => {
      const total = /^(\d+)\s/.exec(stdout);
      if (total) resolve(Number(total[1]));
      else reject(error ?? new Error(`du printed no total for ${path}`));
    });
  });
}

/** The quota: the most a workspace may hold of each. */
export type WorkspaceLimits = WorkspaceUsage;

export class WorkspaceQuota {
  /** Usage after the last command (null: not measured yet). */
  private known: WorkspaceUsage | null = null;

  constructor(
    readonly path: string,
    readonly limits: WorkspaceLimits,
    private readonly pollMs: number = QUOTA_POLL_MS,
  ) {}

  /**
   * Watches the workspace while `run` runs: aborts `stop` when the command takes it past the quota
   * (beyond what it held at the start, so a command may still delete in an over-full workspace).
   * Resolves with `run`'s outcome and the usage the command left when it went over, else null.
   */
  async watch<T>(
    stop: AbortController,
    run: () => Promise<T>,
  ): Promise<{ result: T; over: WorkspaceUsage | null }> {
    const before = this.known ?? (await workspaceUsage(this.path).catch(() => ({ bytes: 0, inodes: 0 })));
    const limit = {
      bytes: Math.max(this.limits.bytes, before.bytes),
      inodes: Math.max(this.limits.inodes, before.inodes),
    };
    let over: WorkspaceUsage | null = null;
    let measuring = false;
    const timer = setInterval(() => {
      if (measuring) return;
      measuring = true;
      workspaceUsage(this.path)
        .then((now) => {
          if (exceeds(now, limit) && over === null) {
            over = now;
            stop.abort(new QuotaExceeded(now));
          }
        })
        .catch(() => {})
        .finally(() => {
          measuring = false;
        });
    }, this.pollMs);
    timer.unref();
    try {
      const result = await run();
      return { result, over: await this.settle(limit, over) };
    } catch (error) {
      await this.settle(limit, over);
      throw error;
    } finally {
      clearInterval(timer);
    }
  }

  private async settle(limit: WorkspaceLimits, seen: WorkspaceUsage | null): Promise<WorkspaceUsage | null> {
    const after = await workspaceUsage(this.path).catch(() => null);
    this.known = after;
    if (seen !== null) return seen;
    return after !== null && exceeds(after, limit) ? after : null;
  }
}

const exceeds = (usage: WorkspaceUsage, limit: WorkspaceLimits) =>
  usage.bytes > limit.bytes || usage.inodes > limit.inodes;

/** The reason a command was stopped for the quota. */
export class QuotaExceeded extends PlatformError {
  constructor(readonly usage: WorkspaceUsage) {
    super("workspace_quota_exceeded", "the workspace's disk quota was exceeded");
    this.name = "QuotaExceeded";
  }
}
