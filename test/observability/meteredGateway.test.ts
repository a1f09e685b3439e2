/**
 * The metered worker gateway counts claims and passes every argument of a claim through: a slot's
 * idleness and the run a woken claim prefers decide which run the coordinator hands out.
 */
import { describe, expect, it } from "vitest";
import type { Activation } from "../../src/coordinator/ports.js";
import { meteredGateway } from "../../src/observability/meteredGateway.js";
import { createPrometheusMetrics } from "../../src/observability/prometheusMetrics.js";
import type { WorkerTransport } from "../../src/worker/ports.js";
import { parseExposition, total } from "../support/metricsScrape.js";

describe("the metered worker gateway", () => {
  it("passes a claim's idleness and preferred run through, and counts what it claimed", async () => {
    const seen: unknown[][] = [];
    const inner = {
      claim: async (...args: unknown[]) => {
        seen.push(args);
        return { runId: "run_x", leaseExpiresAt: 2_000, claimableSince: 500, reclaimed: false } as Activation;
      },
    } as unknown as WorkerTransport;
    const metrics = createPrometheusMetrics();
    const gateway = meteredGateway(inner, metrics, "local");

    expect(await gateway.claim("w/0", 1_000, true, "run_x")).toMatchObject({ runId: "run_x" });
    expect(seen).toEqual([["w/0", 1_000, true, "run_x"]]);
    const samples = parseExposition(await metrics.render());
    expect(total(samples, "awaken_run_claims_total", { via: "local", kind: "queued" })).toBe(1);
    expect(total(samples, "awaken_run_claim_wait_seconds_sum", { via: "local" })).toBe(0.5);
  });
});
