/**
 * Workspace quotas over the SDK, on SQLite and PostgreSQL: past a limit the operator set, a new
 * session or a message that starts a turn is refused with a 429 (`rate_limit_error`, the SDK's
 * `RateLimitError`) naming the limit, nothing written; work already admitted goes on (an interrupt
 * and answers are never refused). The usage route reads the same records: tokens and list cost
 * per day from committed usage facts, runs and sessions now, beside the limits.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { RateLimitError } from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import type { QuotaConfig } from "../../src/coordinator/workspaceQuotas.js";
import { OffsetClock } from "../support/offsetClock.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  expectApiError,
  history,
  isEndTurnIdle,
  MODEL,
  rawRequest,
  userMessage,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const BACKENDS = ["SQLite", "PostgreSQL"] as const;
const RATE_LIMITED = { status: 429, type: "rate_limit_error" } as const;

describe.each(BACKENDS)("workspace quotas on %s", (backend) => {
  const unavailable = backend === "PostgreSQL" ? postgresUnavailable() : null;
  const started: Array<{ t: TestServer; drop?: () => Promise<void> }> = [];

  async function server(quotas: QuotaConfig, clock?: OffsetClock): Promise<TestServer> {
    const schema = backend === "PostgreSQL" ? await emptySchema() : undefined;
    const t = await startTestServer({
      quotas,
      ...(schema ? { databaseUrl: schema.url } : {}),
      ...(clock ? { clock } : {}),
    });
    started.push({ t, ...(schema ? { drop: () => schema.drop() } : {}) });
    return t;
  }

  async function agentAndEnvironment(client: Anthropic) {
    const agent = await client.beta.agents.create({ name: "quota", model: MODEL });
    const environment = await client.beta.environments.create({ name: "quota" });
    return { agent: agent.id, environment_id: environment.id };
  }

  beforeEach((ctx) => {
    if (unavailable) ctx.skip(unavailable);
  });
  afterEach(() => {
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
  });
  afterAll(async () => {
    for (const { t, drop } of started) {
      await t.close();
      await drop?.();
    }
  });
  it("refuses past each limit with a 429 naming it, and admitted work goes on", async () => {
    const clock = new OffsetClock();
    const t = await server(
      { default: { sessionsPerHour: 3, concurrentRuns: 1, tokensPerDay: 1 }, workspaces: {} },
      clock,
    );
    const { client } = t;
    const params = await agentAndEnvironment(client);

    // concurrent_runs 1: while one turn runs, a message starting another is refused.
    process.env.AWAKEN_OFFLINE_DELAY_MS = "150";
    const first = await client.beta.sessions.create(params);
    const second = await client.beta.sessions.create(params);
    await client.beta.sessions.events.send(first.id, { events: [userMessage("tell me a long story")] });
    const refused = await expectApiError(
      client.beta.sessions.events.send(second.id, { events: [userMessage("me too")] }),
      RateLimitError,
      { ...RATE_LIMITED, message: ["concurrent_runs (1)", "Work already running goes on"] },
    );
    expect(refused.status).toBe(429);
    expect(await history(client, second.id)).toEqual([]);
    // An interrupt is never refused: it stops admitted work.
    await client.beta.sessions.events.send(first.id, { events: [{ type: "user.interrupt" }] });
    await waitForHistory(client, first.id, (events) => events.some(isEndTurnIdle), 20_000);
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
    // With nothing running, a turn is admitted, and its usage is committed.
    await client.beta.sessions.events.send(second.id, { events: [userMessage("hello")] });
    await waitForHistory(client, second.id, (events) => events.some(isEndTurnIdle), 20_000);

    // sessions_per_hour 3: a third session is made, a fourth refused; an hour later it is admitted.
    await client.beta.sessions.create(params);
    await expectApiError(client.beta.sessions.create(params), RateLimitError, {
      ...RATE_LIMITED,
      message: ["sessions_per_hour (3): 3 sessions were created in the last hour"],
    });
    expect((await client.beta.sessions.list()).data).toHaveLength(3);

    // tokens_per_day 1: that turn used tokens; once the day's usage is read again (past its
    // freshness), a message starting a turn is refused.
    clock.advance(6_000);
    await expectApiError(
      client.beta.sessions.events.send(second.id, { events: [userMessage("one more")] }),
      RateLimitError,
      { ...RATE_LIMITED, message: ["tokens_per_day (1)"] },
    );

    // The usage route reads the same records.
    const usage = await rawRequest(t, "GET", "/v1/awaken/usage?days=2");
    expect(usage.status).toBe(200);
    const body = usage.body as {
      days: Array<{ date: string; tokens: number }>;
      now: { active_runs: number; sessions_last_hour: number; tokens_last_24h: number };
      limits: Record<string, unknown>;
    };
    expect(body.days).toHaveLength(2);
    expect(body.days.at(-1)?.tokens).toBeGreaterThan(0);
    expect(body.now).toMatchObject({ active_runs: 0, sessions_last_hour: 3 });
    expect(body.now.tokens_last_24h).toBe(body.days.at(-1)?.tokens);
    expect(body.limits).toEqual({
      concurrent_runs: 1,
      sessions_per_hour: 3,
      tokens_per_day: 1,
      list_cost_per_day: null,
    });
    // An hour on, the session limit has room, but the day's tokens are still spent; a day on, both
    // windows have rolled past and new work is admitted again.
    clock.advance(3_600_000);
    await expectApiError(client.beta.sessions.create(params), RateLimitError, {
      ...RATE_LIMITED,
      message: ["tokens_per_day (1)"],
    });
    clock.advance(24 * 3_600_000);
    const later = await client.beta.sessions.create(params);
    await client.beta.sessions.events.send(later.id, { events: [userMessage("a new day")] });
  });
});
