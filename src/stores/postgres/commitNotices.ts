import type { WakeSignal } from "../../coordinator/wakeSignals.js";

/**
 * Wake notifications a PostgreSQL commit carries itself: the committing statement runs
 * `pg_notify(channel, payload)` for the signals the coordinator sends once the commit returns, so
 * they cost no statement of their own and reach other replicas exactly when (and only if) the
 * transaction commits. `NotifyWakeSignals` implements it; the coordinator's later signal still
 * reaches this process's listeners at once but is not published again.
 */
export interface CommitNotices {
  /** The LISTEN/NOTIFY channel of this schema. */
  readonly channel: string;
  /** The payload the signal would be published with; null when it cannot travel (too long). */
  payloadOf(signal: WakeSignal): string | null;
  /** These payloads were notified by a statement that has committed: don't publish them again. */
  carried(payloads: readonly string[]): void;
}

/** The notices of one commit: what its statement sends, and what to tell once it committed. */
export interface CarriedNotices {
  channel: string;
  payloads: string[];
}

/** The payloads of `signals` a commit can carry (none without notices). */
export function carriedNotices(
  notices: CommitNotices | undefined,
  signals: readonly WakeSignal[],
): CarriedNotices | null {
  if (!notices) return null;
  const payloads: string[] = [];
  for (const signal of signals) {
    const payload = notices.payloadOf(signal);
    if (payload !== null && !payloads.includes(payload)) payloads.push(payload);
  }
  return payloads.length > 0 ? { channel: notices.channel, payloads } : null;
}
