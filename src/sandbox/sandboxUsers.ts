import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface UidRange {
  /** First host uid handed out (inclusive). */
  first: number;
  /** Last host uid handed out (inclusive). */
  last: number;
}

export const DEFAULT_UID_RANGE: UidRange = { first: 200_000, last: 265_535 };

/**
 * Hands out one unprivileged host uid per live sandbox. One each, because RLIMIT_NPROC counts every
 * process of a host uid (zombies too): sandboxes sharing a uid would share, and exhaust, one budget.
 *
 * "Unused" means: not handed out by this pool, not an account in /etc/passwd or group in
 * /etc/group, and owning no process on the host right now. Files a released uid left elsewhere on
 * the host are harmless to its next holder: a sandbox sees no host path but its binds.
 *
 * Several processes on one host (test workers, an all-in-one server beside a remote worker) may
 * draw from the same range: each uid handed out is also claimed host-wide by creating a lease file
 * (`O_EXCL`) naming the holder's pid, so two processes never hand out one uid. A lease whose pid is
 * gone is stale and taken over.
 */
export class HostUidPool {
  private readonly taken = new Set<number>();
  /** A uid checked unused and already reserved, so the next `allocate` need not scan the host. */
  private spare: Promise<number> | null = null;

  constructor(
    private readonly range: UidRange = DEFAULT_UID_RANGE,
    private readonly leaseDir: string = DEFAULT_LEASE_DIR,
  ) {
    const { first, last } = range;
    if (
      !Number.isInteger(first) ||
      !Number.isInteger(last) ||
      first < 1 ||
      last < first ||
      last >= 2 ** 32 - 1
    ) {
      throw new Error(`not a usable host uid range: ${first}–${last}`);
    }
  }

  /**
   * An unused uid, now this caller's until `release`. Scanning the host's processes takes a few ms
   * (more on a busy host), so each allocation also reserves the next one in the background: a uid
   * reserved here cannot be handed to anyone else meanwhile, and no other process on the host may
   * take uids from this range, so it is as unused when handed out as when it was checked.
   */
  async allocate(): Promise<number> {
    const spare = this.spare;
    this.spare = null;
    const uid = (spare ? await spare.catch(() => null) : null) ?? (await this.scanAndTake());
    if (this.spare === null) {
      const next = this.scanAndTake();
      this.spare = next;
      next.catch(() => {
        if (this.spare === next) this.spare = null;
      });
    }
    return uid;
  }

  /** Gives back the uid reserved ahead, so a pool that is done leaves no lease behind. */
  async close(): Promise<void> {
    const spare = this.spare;
    this.spare = null;
    const uid = await spare?.catch(() => null);
    if (uid !== null && uid !== undefined) this.release(uid);
  }

  release(uid: number): void {
    if (!this.taken.delete(uid)) return;
    try {
      unlinkSync(join(this.leaseDir, String(uid)));
    } catch {
      // Already gone: nothing to release.
    }
  }

  private async scanAndTake(): Promise<number> {
    const busy = await hostIdsInUse();
    mkdirSync(this.leaseDir, { recursive: true, mode: 0o700 });
    for (let uid = this.range.first; uid <= this.range.last; uid += 1) {
      if (this.taken.has(uid) || busy.has(uid)) continue;
      if (!this.claimHostWide(uid)) continue;
      this.taken.add(uid);
      return uid;
    }
    throw new Error(`no free host uid left in ${this.range.first}–${this.range.last}`);
  }

  /** Creates the uid's lease file, taking over a stale one (its pid is gone). */
  private claimHostWide(uid: number): boolean {
    const path = join(this.leaseDir, String(uid));
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        const fd = openSync(path, "wx", 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (holderAlive(path)) return false;
        try {
          unlinkSync(path);
        } catch {
          // Another process took it over first; the next attempt sees its lease.
        }
      }
    }
    return false;
  }
}

function holderAlive(leasePath: string): boolean {
  let text: string;
  try {
    text = readFileSync(leasePath, "utf8");
  } catch {
    return false;
  }
  // Empty: its holder created it and has not written its pid yet. Never take that over.
  if (text === "") return true;
  const pid = Number(text);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Host-wide uid leases live here (root's `/run` when writable, else the temp dir). */
const DEFAULT_LEASE_DIR =
  process.getuid?.() === 0 ? "/run/awaken-sandbox-uids" : join(tmpdir(), "awaken-sandbox-uids");

/** Ids of accounts, groups and running processes (real, effective, saved and fs uids). */
async function hostIdsInUse(): Promise<Set<number>> {
  const ids = new Set<number>();
  for (const file of ["/etc/passwd", "/etc/group"]) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      const id = Number(line.split(":")[2]);
      if (line !== "" && Number.isInteger(id)) ids.add(id);
    }
  }
  await eachProcessStatus((status) => {
    const line = /^Uid:(.*)$/m.exec(status)?.[1];
    for (const field of line?.split(/\s+/) ?? []) {
      if (field !== "") ids.add(Number(field));
    }
  });
  return ids;
}

/**
 * Calls `visit` with /proc/PID/status of every host process. Read synchronously, in batches that
 * yield to the event loop between them: ~20 µs a process this way, against ~100 µs through the
 * thread pool (four round trips a file).
 */
async function eachProcessStatus(visit: (status: string) => void): Promise<void> {
  const pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  for (let at = 0; at < pids.length; at += 1) {
    if (at > 0 && at % 128 === 0) await new Promise((resolve) => setImmediate(resolve));
    let status: string;
    try {
      status = readFileSync(`/proc/${pids[at]}/status`, "utf8");
    } catch {
      continue; // Gone meanwhile.
    }
    visit(status);
  }
}

/**
 * Waits (at most `ms`) until no live process runs as `uid`: a killed sandbox's PID namespace is torn
 * down after bwrap exits, not with it. Zombies are not waited for: bwrap's inner init, reparented to
 * host PID 1, may wait there to be reaped, and runs nothing (and `allocate` still sees its uid as
 * in use while it is there). False when some process is still there after `ms`.
 */
export async function waitForNoProcesses(uid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    let live = 0;
    await eachProcessStatus((status) => {
      if (!/^State:\s+Z/m.test(status) && Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) === uid) live += 1;
    });
    if (live === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
