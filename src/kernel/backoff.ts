import { type Clock, systemClock } from "./clock.js";

/**
 * How the delay is spread below its exponential ceiling. `full` (uniform in [0, ceiling]) parts a
 * crowd of clients that failed together best; `equal` keeps at least half the ceiling; `none` waits
 * the ceiling itself, for a single loop whose waits tests and operators read as exact figures.
 */
export type Jitter = "full" | "equal" | "none";

/** One retry policy: the delay before attempt n+1 is baseMs·2^(n-1), capped at maxMs, then jittered. */
export interface BackoffPolicy {
  /** The ceiling of the first wait (after one failed attempt). */
  baseMs: number;
  /** No wait exceeds this. */
  maxMs: number;
  /** Full jitter unless said otherwise. */
  jitter?: Jitter;
  /** Attempts in all, the first included; unset: no limit. */
  maxAttempts?: number;
  /** No attempt starts this long after the first one did; unset: no limit. */
  deadlineMs?: number;
}

/** The wait after `failures` failed attempts (1 for the first retry); stateless, for stored schedules. */
export function backoffDelayMs(
  policy: Pick<BackoffPolicy, "baseMs" | "maxMs" | "jitter">,
  failures: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
  switch (policy.jitter ?? "full") {
    case "none":
      return ceiling;
    case "equal":
      return Math.round(ceiling / 2 + (random() * ceiling) / 2);
    case "full":
      return Math.round(random() * ceiling);
  }
}

export interface BackoffDeps {
  clock?: Clock;
  random?: () => number;
}

/**
 * One retry sequence: counts failures, and answers the wait before the next attempt or `null` once
 * the attempts or the deadline are spent. `reset` after a success starts the sequence over.
 */
export class Backoff {
  private failed = 0;
  private startedAt: number;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(
    private readonly policy: BackoffPolicy,
    deps: BackoffDeps = {},
  ) {
    this.clock = deps.clock ?? systemClock;
    this.random = deps.random ?? Math.random;
    this.startedAt = this.clock.now();
  }

  /** Failed attempts since the start (or the last reset). */
  get failures(): number {
    return this.failed;
  }

  /** Records a failed attempt; the wait before the next one, or `null` when none may follow. */
  next(): number | null {
    this.failed += 1;
    const { maxAttempts, deadlineMs } = this.policy;
    if (maxAttempts !== undefined && this.failed >= maxAttempts) return null;
    const delay = backoffDelayMs(this.policy, this.failed, this.random);
    if (deadlineMs === undefined) return delay;
    const left = this.startedAt + deadlineMs - this.clock.now();
    // A wait that would end past the deadline is cut to it: the last attempt still happens in time.
    return left > 0 ? Math.min(delay, left) : null;
  }

  reset(): void {
    this.failed = 0;
    this.startedAt = this.clock.now();
  }
}
