import { BoundedCache } from "../../kernel/boundedCache.js";
import type { Clock } from "../../kernel/clock.js";
import type { ProjectionColumns } from "../sql/appendFacts.js";
import type { RunEffectWrites, RunUpdate } from "../sql/runWrites.js";
import type { Database } from "../sql/schema.js";

/** What an input append reads before it decides: the session row, its thread's head, its active run. */
export type InputRead = Database["sessions"] & {
  /** The session row's version (`xmin`): any write to the row changes it. */
  s_xmin: string;
  agent_snapshot: string;
  head_version: string | number | null;
  h_status: string | null;
  h_pending: string | null;
  h_usage: string | null;
  head_at: string | number | null;
  run_id: string | null;
  run_state: string | null;
  run_epoch: string | number | null;
};

/** A session's read kept warm for at most this long: long enough for a turn's next send. */
const TTL_MS = 30_000;
/** Entries hold an agent snapshot each: a bound on memory, far above the sessions a replica drives at once. */
const MAX_ENTRIES = 1_000;
const ACTIVE = new Set(["queued", "claimed", "awaiting"]);

/**
 * The input append's read, known without reading it: a session this process created, or one whose
 * turn this process's worker just committed, is in the state that write left, so the next send on it
 * can skip its read. Only a help, never a truth: the append's statement checks everything the
 * decision used (the session row's version, the active run's state and epoch or that there is none,
 * the head's version), so a stale entry costs a statement that writes nothing, and the append then
 * reads. An entry serves one send: after that append, only this process's next commit of the turn
 * (or none) makes it usable again, so a replica whose sends alternate with another's rarely guesses.
 */
export class InputReadCache {
  private readonly entries: BoundedCache<string, { read: InputRead; usable: boolean }>;

  constructor(clock: Clock) {
    this.entries = new BoundedCache({ maxEntries: MAX_ENTRIES, ttlMs: TTL_MS, clock });
  }

  /** The read an append may use instead of reading, if this process knows it. */
  usable(sessionId: string): InputRead | null {
    const entry = this.entries.get(sessionId);
    // A claimed run may have a model request open, which only a read finds.
    return entry?.usable && entry.read.run_state !== "claimed" ? entry.read : null;
  }

  /** A new session this process inserted: nothing committed, no run. */
  created(read: InputRead): void {
    this.entries.set(read.id, { read, usable: true });
  }

  /** What an append read: kept (not usable) so the turn's commit can extend it. */
  read(read: InputRead): void {
    this.entries.set(read.id, { read, usable: false });
  }

  forget(sessionId: string): void {
    this.entries.delete(sessionId);
  }

  /** An append wrote `head` (when it had facts) and `runs` on top of `read`; its session row is unchanged. */
  appended(
    read: InputRead,
    head: (ProjectionColumns & { version: number }) | null,
    runs: RunEffectWrites,
    now: number,
  ): void {
    const next: InputRead = { ...read, ...(head ? headColumns(head, now) : {}) };
    const inserted = runs.inserts.at(-1);
    if (inserted) Object.assign(next, runColumns(inserted.id, inserted.state, Number(inserted.epoch)));
    else if (runs.update && runs.update.id === read.run_id) {
      const state = typeof runs.update.set.state === "string" ? runs.update.set.state : read.run_state;
      const epoch =
        typeof runs.update.set.epoch === "number" ? runs.update.set.epoch : Number(read.run_epoch);
      Object.assign(next, runColumns(read.run_id, state, epoch));
    }
    this.entries.set(read.id, { read: next, usable: false });
  }

  /**
   * This process's worker committed the run `runId` (claim `epoch`) on `threadId` from
   * `expectedVersion` to `head`, and `run` is what the commit did to the run (null: it stays
   * claimed). Extends the session's entry when the entry ended where the commit started.
   */
  committed(
    sessionId: string,
    threadId: string,
    expectedVersion: number,
    head: ProjectionColumns & { version: number },
    runId: string,
    epoch: number,
    run: RunUpdate | null,
    now: number,
  ): void {
    const entry = this.entries.get(sessionId);
    if (!entry) return;
    const read = entry.read;
    if (
      read.thread_id !== threadId ||
      Number(read.head_version ?? 0) !== expectedVersion ||
      read.run_id !== runId
    ) {
      this.entries.delete(sessionId);
      return;
    }
    const state = typeof run?.set.state === "string" ? run.set.state : "claimed";
    this.entries.set(sessionId, {
      read: { ...read, ...headColumns(head, now), ...runColumns(runId, state, epoch) },
      usable: true,
    });
  }
}

function headColumns(head: ProjectionColumns & { version: number }, now: number): Partial<InputRead> {
  return {
    head_version: head.version,
    h_status: head.status,
    h_pending: head.pending_json,
    h_usage: head.usage_json,
    head_at: now,
  };
}

/** The run columns a read would return: the run while it is active, none once it ended. */
function runColumns(id: string | null, state: string | null, epoch: number): Partial<InputRead> {
  return id !== null && state !== null && ACTIVE.has(state)
    ? { run_id: id, run_state: state, run_epoch: epoch }
    : { run_id: null, run_state: null, run_epoch: null };
}
