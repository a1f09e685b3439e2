import { describe, expect, it } from "vitest";
import {
  type DeploymentLike,
  deploymentState,
  runRow,
  scheduleSummary,
} from "../../src/console/projection/deployments.js";

const base: DeploymentLike = {
  status: "active",
  archived_at: null,
  paused_reason: null,
  schedule: {
    expression: "0 9 * * 1-5",
    timezone: "America/Los_Angeles",
    upcoming_runs_at: ["2030-01-01T17:00:00Z", "2030-01-02T17:00:00Z"],
    last_run_at: "2029-12-31T17:00:03Z",
  },
};

describe("deployments in the Console", () => {
  it("summarizes a schedule: expression and zone, next instant while active, last run", () => {
    expect(scheduleSummary(base)).toEqual({
      label: "0 9 * * 1-5 in America/Los_Angeles",
      next: "2030-01-01T17:00:00Z",
      last: "2029-12-31T17:00:03Z",
    });
    // Paused or archived: nothing will fire next.
    expect(scheduleSummary({ ...base, status: "paused", paused_reason: { type: "manual" } }).next).toBeNull();
    expect(scheduleSummary({ ...base, archived_at: "2030-01-01T00:00:00Z" }).next).toBeNull();
    expect(scheduleSummary({ ...base, schedule: null })).toEqual({
      label: "manual only",
      next: null,
      last: null,
    });
  });

  it("names a deployment's state, with the error that paused it", () => {
    expect(deploymentState(base)).toBe("active");
    expect(deploymentState({ ...base, status: "paused", paused_reason: { type: "manual" } })).toBe("paused");
    expect(
      deploymentState({
        ...base,
        status: "paused",
        paused_reason: { type: "error", error: { type: "agent_archived_error" } },
      }),
    ).toBe("paused by agent_archived_error");
    // Archived deployments report `active` on the wire; the Console says archived.
    expect(deploymentState({ ...base, archived_at: "2030-01-01T00:00:00Z" })).toBe("archived");
  });

  it("shows a run's session, or why it has none", () => {
    expect(
      runRow({
        id: "drun_1",
        session_id: "sesn_1",
        error: null,
        trigger_context: { type: "schedule", scheduled_at: "2030-01-01T17:00:00Z" },
        created_at: "2030-01-01T17:00:04Z",
      }),
    ).toEqual({
      id: "drun_1",
      trigger: "schedule",
      scheduledAt: "2030-01-01T17:00:00Z",
      outcome: { kind: "session", sessionId: "sesn_1" },
      createdAt: "2030-01-01T17:00:04Z",
    });
    expect(
      runRow({
        id: "drun_2",
        session_id: null,
        error: { type: "session_rate_limited_error", message: "limit reached" },
        trigger_context: { type: "manual" },
        created_at: "2030-01-01T18:00:00Z",
      }).outcome,
    ).toEqual({ kind: "error", type: "session_rate_limited_error", message: "limit reached" });
  });
});
