import type { LastRun } from "../api/awaken.js";
import type { Session } from "../api/wire.js";

/** What the sessions list shows: the wire's status, or `failed` for an idle session whose last run failed. */
export type ShownStatus = Session["status"] | "failed";

/** The list's status filter: the wire's statuses plus `failed` (idle sessions whose last run failed). */
export const STATUS_FILTERS: readonly ShownStatus[] = [
  "idle",
  "failed",
  "running",
  "rescheduling",
  "terminated",
];

export interface SessionStatusView {
  status: ShownStatus;
  /** The failed run's error message, when it committed one. */
  error: string | null;
}

/**
 * A session's shown status. The wire keeps an idle session `idle` whether its run ended well or
 * not; the last run's outcome (read from its committed history) is what tells a failure apart.
 */
export function sessionStatusView(
  session: Pick<Session, "status">,
  lastRun: LastRun | null | undefined,
): SessionStatusView {
  if (session.status === "idle" && lastRun?.outcome === "failed")
    return { status: "failed", error: lastRun.error?.message ?? lastRun.stop_reason };
  return { status: session.status, error: null };
}

/** The wire statuses to ask the list for under a filter: `failed` sessions are idle ones. */
export function wireStatusesFor(filter: ShownStatus | ""): Session["status"][] | undefined {
  if (filter === "") return undefined;
  return [filter === "failed" ? "idle" : filter];
}
