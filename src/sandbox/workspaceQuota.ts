/**
 * The disk quota of a session's workspace, by accounting: `du` of the workspace while a command
 * runs (every `pollMs`) and once it has ended, and RLIMIT_FSIZE capped at the quota, so no single
 * file can outgrow it. Chosen over the alternatives because it works the same for a worker that is
 * root and one that is not, keeps the workspace an ordinary directory (the warm pool hands a slot
 * over with rename(2), and a workspace survives a worker restart), and costs no memory: a sized
 * tmpfs would hold every workspace in RAM, and a loop-mounted image needs root, leaves mounts
 * behind when a worker crashes and cannot be renamed into place. The price: the bound is soft by
 * what one command writes between two measurements (at most `pollMs` of writing); a command that
 * takes the workspace over its quota is stopped and reported, and the workspace keeps what it
 * wrote until the model deletes something.
 */
import { execFile } from "node:child_process";

export const QUOTA_POLL_MS = 1_000;

/** Bytes of disk the tree under `path` holds (hard links once, symlinks not followed, one filesystem). */
export function diskUsage(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // du exits 1 when an entry vanished during the walk (a command deleting files): the total stands.
    execFile("du", ["-s", "-x", "-B1", "--", path], { env: { LC_ALL: "C" } }, (error, stdout) => {
      const total = /^(\d+)\s/.exec(stdout);
      if (total) resolve(Number(total[1]));
      else reject(error ?? new Error(`du printed no total for ${path}`));
    });
  });
}

export class WorkspaceQuota {
  /** Usage after the last command (null: not measured yet). */
  private known: number | null = null;

  constructor(
    readonly path: string,
    readonly bytes: number,
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
  ): Promise<{ result: T; overBytes: number | null }> {
    const before = this.known ?? (await diskUsage(this.path).catch(() => 0));
    const limit = Math.max(this.bytes, before);
    let overBytes: number | null = null;
    let measuring = false;
    const timer = setInterval(() => {
      if (measuring) return;
      measuring = true;
      diskUsage(this.path)
        .then((now) => {
          if (now > limit && overBytes === null) {
            overBytes = now;
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
      return { result, overBytes: await this.settle(limit, overBytes) };
    } catch (error) {
      await this.settle(limit, overBytes);
      throw error;
    } finally {
      clearInterval(timer);
    }
  }

  private async settle(limit: number, seen: number | null): Promise<number | null> {
    const after = await diskUsage(this.path).catch(() => null);
    this.known = after;
    if (seen !== null) return seen;
    return after !== null && after > limit ? after : null;
  }
}

/** The reason a command was stopped for the quota. */
export class QuotaExceeded extends Error {
  constructor(readonly usedBytes: number) {
    super("the workspace's disk quota was exceeded");
    this.name = "QuotaExceeded";
  }
}
