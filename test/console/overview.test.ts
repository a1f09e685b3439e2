import { describe, expect, it } from "vitest";
import type { HourOfRuns, WorkerRoster } from "../../src/console/api/awaken.js";
import {
  approvalAges,
  formatDuration,
  runTotals,
  slotSummary,
  stackedRunSeries,
} from "../../src/console/projection/overview.js";

const hour = (iso: string, completed: number, failed: number, interrupted = 0): HourOfRuns => ({
  hour: iso,
  completed,
  failed,
  interrupted,
  waiting: 0,
  other: 0,
});

describe("the overview's projection", () => {
  const hours = [hour("2026-01-01T00:00:00.000Z", 2, 1), hour("2026-01-01T01:00:00.000Z", 3, 0, 1)];

  it("totals the charted outcomes and stacks their series by hour, topmost first", () => {
    expect(runTotals(hours)).toEqual({ completed: 5, failed: 1, interrupted: 1 });
    expect(stackedRunSeries(hours)).toEqual([
      [1767225600, 1767229200],
      [3, 4],
      [3, 3],
      [2, 3],
    ]);
  });

  it("formats durations for people", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(4_200)).toBe("4.2 s");
    expect(formatDuration(3 * 60_000 + 5)).toBe("3 min");
    expect(formatDuration(125 * 60_000)).toBe("2 h 5 min");
  });

  it("orders waiting approvals oldest first", () => {
    const now = Date.parse("2026-01-01T00:10:00Z");
    const ages = approvalAges(
      [
        { id: "a", askedAt: "2026-01-01T00:09:00Z" },
        { id: "b", askedAt: null },
        { id: "c", askedAt: "2026-01-01T00:00:00Z" },
      ],
      now,
    );
    expect(ages.map((a) => [a.id, a.waitedMs])).toEqual([
      ["c", 600_000],
      ["a", 60_000],
      ["b", null],
    ]);
  });

  it("counts live workers and their busy slots, a lapsed claim holding none", () => {
    const claim = (lapsed: boolean) => ({
      run_id: "r",
      session_id: "s",
      slot: "0",
      epoch: 1,
      lease_expires_at: null,
      renewed_at: "",
      lapsed,
    });
    const roster: WorkerRoster = {
      type: "worker_roster",
      truncated: false,
      self_hosted: [],
      workers: [
        {
          type: "worker",
          id: "w1",
          kind: "in_process",
          this_replica: true,
          alive: true,
          last_seen_at: null,
          slots: 4,
          claims: [claim(false), claim(true)],
        },
        {
          type: "worker",
          id: "w2",
          kind: "remote",
          this_replica: false,
          alive: false,
          last_seen_at: null,
          slots: null,
          claims: [],
        },
      ],
    };
    expect(slotSummary(roster)).toEqual({ workers: 2, alive: 1, slots: 4, busy: 1 });
  });
});
