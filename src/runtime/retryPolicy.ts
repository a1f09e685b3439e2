import { backoffDelayMs } from "../kernel/backoff.js";

export interface RetryPolicy {
  /** How many transient model errors in a row are retried before the turn is dropped. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 1_000, maxDelayMs: 30_000 };

/** The kernel's backoff with equal jitter (never under half the ceiling); `attempt` is 1 for the first retry. */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  return backoffDelayMs(
    { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs, jitter: "equal" },
    attempt,
    random,
  );
}
