import type { HourOfRuns, WorkerRoster } from "../api/awaken.js";

// What the overview page draws, from the server's overview and the workers roster: pure, so the
// figures are unit-tested without a browser.

/** The outcomes the runs chart draws, in legend order. */
export const CHARTED_OUTCOMES = ["completed", "failed", "interrupted"] as const;
export type ChartedOutcome = (typeof CHARTED_OUTCOMES)[number];

export type RunTotals = Record<ChartedOutcome, number>;

export function runTotals(hours: readonly HourOfRuns[]): RunTotals {
  const totals: RunTotals = { completed: 0, failed: 0, interrupted: 0 };
  for (const hour of hours) for (const outcome of CHARTED_OUTCOMES) totals[outcome] += hour[outcome];
  return totals;
}

/**
 * uPlot's aligned data for stacked bars: x in Unix seconds, then per outcome the running sum of the
 * outcomes up to it, topmost first (uPlot paints in order, so each shorter bar covers the taller).
 */
export function stackedRunSeries(hours: readonly HourOfRuns[]): [number[], ...number[][]] {
  const stacks = CHARTED_OUTCOMES.map((_, upTo) =>
    hours.map((hour) => CHARTED_OUTCOMES.slice(0, upTo + 1).reduce((sum, outcome) => sum + hour[outcome], 0)),
  );
  return [hours.map((hour) => Date.parse(hour.hour) / 1000), ...stacks.reverse()];
}

/** A duration as a person reads it: `850 ms`, `4.2 s`, `3 min`, `2 h 5 min`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Waiting approvals, oldest first, each with how long it has waited (null: its ask was not read). */
export function approvalAges<T extends { askedAt: string | null }>(
  approvals: readonly T[],
  now: number,
): Array<T & { waitedMs: number | null }> {
  return approvals
    .map((approval) => ({
      ...approval,
      waitedMs: approval.askedAt === null ? null : Math.max(0, now - Date.parse(approval.askedAt)),
    }))
    .sort((a, b) => (b.waitedMs ?? -1) - (a.waitedMs ?? -1));
}

export interface SlotSummary {
  workers: number;
  alive: number;
  /** Slots of the workers that say how many they have. */
  slots: number;
  busy: number;
}

/** Workers alive and their slots: a claim not lapsed holds a slot. */
export function slotSummary(roster: WorkerRoster): SlotSummary {
  let alive = 0;
  let slots = 0;
  let busy = 0;
  for (const worker of roster.workers) {
    if (worker.alive) alive += 1;
    slots += worker.slots ?? 0;
    busy += worker.claims.filter((claim) => !claim.lapsed).length;
  }
  return { workers: roster.workers.length, alive, slots, busy };
}
