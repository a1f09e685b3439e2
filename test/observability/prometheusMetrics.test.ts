import { describe, expect, it } from "vitest";
import { REMOTE_WORKER_SEEN_MS, RecentWorkers } from "../../src/observability/meteredGateway.js";
import { createPrometheusMetrics } from "../../src/observability/prometheusMetrics.js";
import { helpOf, parseExposition, total } from "../support/metricsScrape.js";

describe("the Prometheus metrics", () => {
  it("counts fence rejections by reason, crash-budget exhaustion, claims with their wait, sandboxes and credential opens", async () => {
    const metrics = createPrometheusMetrics();
    metrics.fenceRejected("stale_claim");
    metrics.fenceRejected("version_conflict");
    metrics.fenceRejected("version_conflict");
    metrics.crashBudgetExhausted();
    metrics.runClaimed("local", false, 0.25);
    metrics.runClaimed("remote", true, 1.5);
    // A claim read back over a skewed clock never observes a negative wait.
    metrics.runClaimed("local", false, -0.01);
    metrics.sandboxRealized("none", "ok", 0.5);
    metrics.sandboxRealized("bwrap", "error");
    metrics.sandboxRealized("made-up-tier", "ok", 1);
    metrics.credentialOpen("mcp_connection", "opened");
    metrics.credentialOpen("egress_proxy", "refused");
    metrics.credentialOpen("sesn_not_a_holder_kind", "opened");
    const text = await metrics.render();
    const samples = parseExposition(text);

    expect(total(samples, "awaken_fence_rejections_total", { reason: "stale_claim" })).toBe(1);
    expect(total(samples, "awaken_fence_rejections_total", { reason: "version_conflict" })).toBe(2);
    expect(total(samples, "awaken_crash_budget_exhausted_total")).toBe(1);
    expect(total(samples, "awaken_run_claims_total", { via: "local", kind: "queued" })).toBe(2);
    expect(total(samples, "awaken_run_claims_total", { via: "remote", kind: "reclaimed" })).toBe(1);
    expect(total(samples, "awaken_run_claim_wait_seconds_sum", { via: "local" })).toBe(0.25);
    expect(total(samples, "awaken_run_claim_wait_seconds_count", { via: "remote" })).toBe(1);
    expect(total(samples, "awaken_sandbox_realizations_total", { tier: "none", outcome: "ok" })).toBe(1);
    expect(total(samples, "awaken_sandbox_realizations_total", { tier: "bwrap", outcome: "error" })).toBe(1);
    // A failed realization has no first tool: no latency observed for it.
    expect(total(samples, "awaken_sandbox_first_tool_seconds_count", { tier: "bwrap" })).toBe(0);
    expect(total(samples, "awaken_sandbox_first_tool_seconds_sum", { tier: "none" })).toBe(0.5);
    // Names outside the fixed sets never become label values.
    expect(total(samples, "awaken_sandbox_realizations_total", { tier: "other" })).toBe(1);
    expect(total(samples, "awaken_credential_opens_total", { holder: "other", outcome: "opened" })).toBe(1);
    expect(
      total(samples, "awaken_credential_opens_total", { holder: "egress_proxy", outcome: "refused" }),
    ).toBe(1);
    expect(text).not.toContain("made-up-tier");
    expect(text).not.toContain("sesn_");
  });

  it("reads scrape-time gauges at every scrape, and a failing read leaves only its gauge without a value", async () => {
    const metrics = createPrometheusMetrics();
    let depth = 3;
    metrics.gaugeAtScrape({
      name: "test_depth",
      help: "A depth read at scrape time, in runs.",
      labelNames: ["state"],
      read: async () => [{ labels: { state: "queued" }, value: depth }],
    });
    metrics.gaugeAtScrape({
      name: "test_broken",
      help: "A gauge whose source is down.",
      read: () => {
        throw new Error("database unreachable");
      },
    });
    expect(total(parseExposition(await metrics.render()), "test_depth", { state: "queued" })).toBe(3);
    depth = 0;
    const text = await metrics.render();
    expect(total(parseExposition(text), "test_depth", { state: "queued" })).toBe(0);
    expect(helpOf(text, "test_broken")).not.toBeNull();
    // Not a made-up zero: NaN, which no `>` alert fires on and `absent`-style checks can see.
    expect(total(parseExposition(text), "test_broken")).toBeNaN();
  });

  it("remote workers count by process (owner without its slot) and age out", () => {
    let now = 1_000_000;
    const workers = new RecentWorkers(() => now);
    workers.saw("host-a.1a2b3c4d/0");
    workers.saw("host-a.1a2b3c4d/1");
    workers.saw("host-b.5e6f7a8b/0");
    expect(workers.count()).toBe(2);
    now += REMOTE_WORKER_SEEN_MS - 1;
    workers.saw("host-b.5e6f7a8b/0");
    now += 2;
    expect(workers.count()).toBe(1);
  });
});
