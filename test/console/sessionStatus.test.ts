import { describe, expect, it } from "vitest";
import type { LastRun } from "../../src/console/api/awaken.js";
import { sessionStatusView, wireStatusesFor } from "../../src/console/projection/sessionStatus.js";

const run = (outcome: LastRun["outcome"], message?: string): LastRun => ({
  outcome,
  stop_reason: outcome === "failed" ? "retries_exhausted" : "end_turn",
  error: message ? { type: "model_request_failed_error", message } : null,
  started_at: null,
  ended_at: "2026-01-01T00:00:00Z",
});

describe("sessionStatusView", () => {
  it("shows an idle session whose last run failed as failed, with its error", () => {
    expect(sessionStatusView({ status: "idle" }, run("failed", "messages: field required"))).toEqual({
      status: "failed",
      error: "messages: field required",
    });
    expect(sessionStatusView({ status: "idle" }, run("failed"))).toEqual({
      status: "failed",
      error: "retries_exhausted",
    });
  });

  it("keeps the wire's status otherwise", () => {
    expect(sessionStatusView({ status: "idle" }, run("completed"))).toEqual({ status: "idle", error: null });
    expect(sessionStatusView({ status: "idle" }, undefined)).toEqual({ status: "idle", error: null });
    // A new run has started since the failure: the session is running, not failed.
    expect(sessionStatusView({ status: "running" }, run("failed", "x"))).toEqual({
      status: "running",
      error: null,
    });
  });

  it("asks the list for idle sessions under the failed filter", () => {
    expect(wireStatusesFor("failed")).toEqual(["idle"]);
    expect(wireStatusesFor("running")).toEqual(["running"]);
    expect(wireStatusesFor("")).toBeUndefined();
  });
});
