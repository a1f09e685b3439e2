import { type Clock, clearTimer, setTimer, systemClock } from "../kernel/clock.js";
import type { WakeSignals } from "./ports.js";

/**
 * Whose sessions a watcher hears of: a workspace's, narrowed to a key's agents, to one session or
 * to the sessions bound to a client name under a prefix.
 */
export interface SessionReach {
  workspaceId: string;
  /** null: every agent of the workspace. */
  agentIds: readonly string[] | null;
  /** null: any session of those agents. */
  sessionId: string | null;
  /** Only sessions bound to a client name starting with this; null or absent: any. */
  namePrefix?: string | null;
}

/** Which of these threads belong to sessions within the reach (a read confined to it). */
export interface WorkspaceThreads {
  threadsOf(reach: SessionReach, threadIds: readonly string[]): Promise<ReadonlySet<string>>;
}

export interface SessionChangeFeedOptions {
  /** Commits arriving this close together are looked up together. */
  batchMs: number;
  /** At most one hint per this interval per watcher (the first at once, the last one kept). */
  minIntervalMs: number;
  /** A hint after this long without one: wake signals only lower latency, a lost one must not stall a page. */
  safetyMs: number;
}

export const DEFAULT_SESSION_CHANGE_FEED: SessionChangeFeedOptions = {
  batchMs: 100,
  minIntervalMs: 1_000,
  safetyMs: 15_000,
};

/** Threads looked up per statement. More in one batch, and the reach is a whole workspace: hint without looking (it is busy; a read is due anyway). */
const MAX_BATCH_THREADS = 200;

/**
 * When a workspace's sessions may have changed: one was created (its thread starts at version 0),
 * a run committed (status, events, an ask), a decision or a message landed from any edge or
 * replica, one was archived or deleted. Each is a thread commit, so the feed hints on the
 * workspace's commits, batched and rate-limited; the reader then reads the record through the
 * public API. It carries no data of its own: a hint says "read again", never what. A reach narrower
 * than the workspace hears only of its own sessions, so a hint says nothing of the others.
 */
export class SessionChangeFeed {
  constructor(
    private readonly signals: WakeSignals,
    private readonly threads: WorkspaceThreads,
    private readonly options: SessionChangeFeedOptions = DEFAULT_SESSION_CHANGE_FEED,
    /** The rate limit, batching and quiet-spell timers run on it. */
    private readonly clock: Clock = systemClock,
  ) {}

  /** Calls `onHint` whenever sessions within `reach` may have changed, until `signal` aborts. */
  watch(reach: SessionReach, onHint: () => void, signal: AbortSignal): void {
    const { batchMs, minIntervalMs, safetyMs } = this.options;
    const clock = this.clock;
    let batch = new Set<string>();
    let batchTimer: unknown;
    let lastHint = Number.NEGATIVE_INFINITY;
    let trailing: unknown;
    let safety: unknown;
    const armSafety = () => {
      clearTimer(clock, safety);
      safety = setTimer(clock, hint, safetyMs);
    };
    const hint = () => {
      if (signal.aborted || trailing !== undefined) return;
      const wait = lastHint + minIntervalMs - clock.now();
      if (wait > 0) {
        trailing = setTimer(
          clock,
          () => {
            trailing = undefined;
            hint();
          },
          wait,
        );
        return;
      }
      lastHint = clock.now();
      // Rearmed on every hint, so an idle workspace costs a reader one read per `safetyMs`.
      armSafety();
      onHint();
    };
    const flush = async () => {
      batchTimer = undefined;
      const ids = [...batch];
      batch = new Set();
      const wholeWorkspace =
        reach.agentIds === null && reach.sessionId === null && (reach.namePrefix ?? null) === null;
      if (ids.length > MAX_BATCH_THREADS && wholeWorkspace) return hint();
      try {
        for (let at = 0; at < ids.length && !signal.aborted; at += MAX_BATCH_THREADS) {
          const found = await this.threads.threadsOf(reach, ids.slice(at, at + MAX_BATCH_THREADS));
          if (found.size > 0) return hint();
        }
      } catch {
        hint(); // a failed lookup must not hide a change: read again
      }
    };
    const off = this.signals.onAnyThreadCommitted((threadId) => {
      batch.add(threadId);
      batchTimer ??= setTimer(clock, () => void flush(), batchMs);
    });
    armSafety();
    signal.addEventListener(
      "abort",
      () => {
        off();
        clearTimer(clock, safety);
        clearTimer(clock, batchTimer);
        clearTimer(clock, trailing);
      },
      { once: true },
    );
  }
}
