import type { CommittedFact } from "../../coordinator/facts.js";
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
  /** Whether the session had resources (they may be added later: a hand-off checks none was). */
  has_resources: boolean;
};

/** A remembered read, usable or not, with the thread's facts up to its head when this process knows them. */
interface Entry {
  read: InputRead;
  usable: boolean;
  history: readonly CommittedFact[] | null;
}

/** A session's read kept warm for at most this long: long enough for a turn's next send. */
const TTL_MS = 30_000;
/** Entries hold an agent snapshot each: a bound on memory, far above the sessions a replica drives at once. */
const MAX_ENTRIES = 1_000;
const ACTIVE = new Set(["queued", "claimed", "awaiting"]);
/** A longer history is not kept: its next run is claimed (and read) as any other. */
const MAX_HISTORY_FACTS = 2_000;

/**
 * The input append's read, known without reading it: a session this process created, or one whose
 * turn this process's worker just committed, is in the state that write left, so the next send on it
 * can skip its read. Only a help, never a truth: the append's statement checks everything the
 * decision used (the session row's version, the active run's state and epoch or that there is none,
 * the head's version), so a stale entry costs a statement that writes nothing, and the append then
 * reads. An entry serves one send: after that append, only this process's next commit of the turn
 * (or none) makes it usable again, so a replica whose sends alternate with another's rarely guesses.
 *
 * An entry also keeps the thread's facts up to its head when this process wrote or claimed them
 * all, so the send can claim the run it starts for an idle slot of this process (`appendHandOff`).
 */
export class InputReadCache {
  private readonly entries: BoundedCache<string, Entry>;

  constructor(clock: Clock) {
    this.entries = new BoundedCache({ maxEntries: MAX_ENTRIES, ttlMs: TTL_MS, clock });
  }

  /** The read an append may use instead of reading (and the history, when known), if this process knows it. */
  usable(sessionId: string): { read: InputRead; history: readonly CommittedFact[] | null } | null {
    const entry = this.entries.get(sessionId);
    // A claimed run may have a model request open, which only a read finds.
    return entry?.usable && entry.read.run_state !== "claimed" ? entry : null;
  }

  /** A new session this process inserted: nothing committed, no run. */
  created(read: InputRead): void {
    this.entries.set(read.id, { read, usable: true, history: [] });
  }

  /** What an append read: kept (not usable) so the turn's commit can extend it. */
  read(read: InputRead): void {
    this.entries.set(read.id, { read, usable: false, history: null });
  }

  /**
   * This process's claim read the thread's whole history, `history`, at `version`: the entry of
   * its session keeps it when it is at that version too (the next send may then hand its run off).
   */
  claimed(sessionId: string, threadId: string, version: number, history: readonly CommittedFact[]): void {
    const entry = this.entries.get(sessionId);
    if (!entry || entry.read.thread_id !== threadId || Number(entry.read.head_version ?? 0) !== version)
      return;
    entry.history = history.length <= MAX_HISTORY_FACTS ? history : null;
  }

  forget(sessionId: string): void {
    this.entries.delete(sessionId);
  }

  /**
   * An append wrote `head` (when it had facts) and `runs` on top of `read`; its session row is
   * unchanged. `history`: the thread's facts up to the new head, when known.
   */
  appended(
    read: InputRead,
    head: (ProjectionColumns & { version: number }) | null,
    runs: RunEffectWrites,
    now: number,
    history: readonly CommittedFact[] | null = null,
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
    this.entries.set(read.id, { read: next, usable: false, history: extended(history, []) });
  }

  /**
   * This process's worker committed the run `runId` (claim `epoch`) on `threadId` from
   * `expectedVersion` to `head` with `facts`, and `run` is what the commit did to the run (null: it
   * stays claimed). Extends the session's entry when the entry ended where the commit started.
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
    /** The commit's facts, parsed only when the entry keeps a history to extend. */
    facts: () => readonly CommittedFact[] = () => [],
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
      history: entry.history === null ? null : extended(entry.history, facts()),
    });
  }
}

/** `history` with `facts` after it, while both are known and the whole stays within the bound. */
function extended(
  history: readonly CommittedFact[] | null,
  facts: readonly CommittedFact[],
): readonly CommittedFact[] | null {
  if (history === null || history.length + facts.length > MAX_HISTORY_FACTS) return null;
  return facts.length === 0 ? history : [...history, ...facts];
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
