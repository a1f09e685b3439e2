import { readdir, readFile } from "node:fs/promises";

export interface UidRange {
  /** First host uid handed out (inclusive). */
  first: number;
  /** Last host uid handed out (inclusive). */
  last: number;
}

export const DEFAULT_UID_RANGE: UidRange = { first: 200_000, last: 265_535 };

/**
 * Hands out one unprivileged host uid per live sandbox. One each, because RLIMIT_NPROC counts every
 * process of a host uid (pitfall 1): sandboxes sharing a uid would share, and exhaust, one budget.
 *
 * "Unused" means: not handed out by this pool, not an account in /etc/passwd or group in
 * /etc/group, and owning no process on the host right now. Files a released uid left elsewhere on
 * the host are harmless to its next holder: a sandbox sees no host path but its binds. Workers on
 * one host must be given disjoint ranges; this pool coordinates only within its own process.
 */
export class HostUidPool {
  private readonly taken = new Set<number>();

  constructor(private readonly range: UidRange = DEFAULT_UID_RANGE) {
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

  async allocate(): Promise<number> {
    const busy = await hostIdsInUse();
    for (let uid = this.range.first; uid <= this.range.last; uid += 1) {
      if (this.taken.has(uid) || busy.has(uid)) continue;
      this.taken.add(uid);
      return uid;
    }
    throw new Error(`no free host uid left in ${this.range.first}–${this.range.last}`);
  }

  release(uid: number): void {
    this.taken.delete(uid);
  }
}

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
  for (const uid of await processUids()) ids.add(uid);
  return ids;
}

/** Every uid some host process runs under, read from /proc/PID/status. */
async function processUids(): Promise<Set<number>> {
  const uids = new Set<number>();
  const pids = (await readdir("/proc")).filter((name) => /^\d+$/.test(name));
  await Promise.all(
    pids.map(async (pid) => {
      const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      const line = status.split("\n").find((l) => l.startsWith("Uid:"));
      for (const field of line?.split(/\s+/).slice(1) ?? []) {
        if (field !== "") uids.add(Number(field));
      }
    }),
  );
  return uids;
}
