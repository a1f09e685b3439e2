/**
 * Workspace quotas at admission: each limit refuses new work with `quota_exceeded` (429) naming
 * the limit and the count it found, a workspace with its own limits ignores the default's, and a
 * day's usage is read again only once its few seconds of freshness are over.
 */
import { describe, expect, it } from "vitest";
import {
  type QuotaConfig,
  type QuotaUsageReader,
  type WindowUsage,
  WorkspaceQuotas,
} from "../../src/coordinator/workspaceQuotas.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { SteppedClock } from "../support/steppedClock.js";

function reader(state: { active: number; sessions: number; usage: WindowUsage }) {
  const asked: string[] = [];
  const port: QuotaUsageReader = {
    activeRuns: async () => state.active,
    sessionsCreatedSince: async () => state.sessions,
    usageSince: async (workspaceId) => {
      asked.push(workspaceId);
      return state.usage;
    },
  };
  return { port, asked };
}

const refusal = async (call: Promise<void>) => {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AwakenError);
  expect((error as AwakenError).code).toBe("quota_exceeded");
  expect((error as AwakenError).category).toBe("rate_limited");
  return (error as AwakenError).message;
};

describe("workspace quotas", () => {
  const config: QuotaConfig = {
    default: { concurrentRuns: 2, sessionsPerHour: 3, tokensPerDay: 1_000, listCostPerDayCents: 250 },
    workspaces: { wrkspc_big: { concurrentRuns: 100 } },
  };

  it("admits below every limit and refuses at each one, naming it", async () => {
    const state = { active: 1, sessions: 2, usage: { tokens: 999, listCostCents: 249 } };
    const clock = new SteppedClock(0);
    const quotas = new WorkspaceQuotas(config, reader(state).port, clock);
    await quotas.admitSession("wrkspc_a");
    await quotas.admitTurn("wrkspc_a");

    state.active = 2;
    expect(await refusal(quotas.admitTurn("wrkspc_a"))).toContain("concurrent_runs (2): 2 runs");
    state.sessions = 3;
    expect(await refusal(quotas.admitSession("wrkspc_a"))).toContain("sessions_per_hour (3): 3 sessions");

    // A fresh workspace reads its usage; at the token limit, then at the cost limit.
    state.active = 0;
    state.usage = { tokens: 1_000, listCostCents: 0 };
    expect(await refusal(quotas.admitTurn("wrkspc_b"))).toContain("tokens_per_day (1000)");
    state.usage = { tokens: 0, listCostCents: 250 };
    expect(await refusal(quotas.admitTurn("wrkspc_c"))).toContain("list_cost_per_day_usd ($2.50): $2.50");
  });

  it("a workspace with its own limits does not take the default's", async () => {
    const state = { active: 50, sessions: 99, usage: { tokens: 10_000_000, listCostCents: 1_000_000 } };
    const quotas = new WorkspaceQuotas(config, reader(state).port, new SteppedClock(0));
    await quotas.admitSession("wrkspc_big");
    await quotas.admitTurn("wrkspc_big");
    expect(quotas.limitsOf("wrkspc_big")).toEqual({ concurrentRuns: 100 });
  });

  it("reads a day's usage again only after a few seconds", async () => {
    const state = { active: 0, sessions: 0, usage: { tokens: 0, listCostCents: 0 } };
    const clock = new SteppedClock(0);
    const { port, asked } = reader(state);
    const quotas = new WorkspaceQuotas(config, port, clock);
    await quotas.admitTurn("wrkspc_a");
    state.usage = { tokens: 5_000, listCostCents: 0 };
    await quotas.admitTurn("wrkspc_a");
    expect(asked).toEqual(["wrkspc_a"]);
    await clock.advance(5_001);
    expect(await refusal(quotas.admitTurn("wrkspc_a"))).toContain("tokens_per_day");
    expect(asked).toEqual(["wrkspc_a", "wrkspc_a"]);
  });
});
