import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  BAD_REQUEST,
  expectApiError,
  history,
  MODEL,
  sleep,
  stopReason,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// Session budgets over the SDK: a claude-sonnet-4-6 agent (list price $3 / $15 per million input /
// output tokens) on the real server, whose Anthropic provider talks to the scripted fake. A request
// of 10,000 input and 2,000 output tokens costs exactly 3 + 3 = 6 US cents at list price.

const BACKENDS = [
  { name: "SQLite", unavailable: () => null, databaseUrl: async () => undefined },
  {
    name: "PostgreSQL",
    unavailable: postgresUnavailable,
    databaseUrl: async () => {
      const schema = await emptySchema();
      drops.push(() => schema.drop());
      return schema.url;
    },
  },
] as const;
const drops: Array<() => Promise<void>> = [];

const SIX_CENTS = { input_tokens: 10_000, output_tokens: 2_000 };
const budget = (amount: string) => ({
  type: "limit" as const,
  max_list_cost: { amount, currency: "USD" as const },
});
const TOOLSET = { type: "agent_toolset_20260401" as const };

for (const backend of BACKENDS) {
  describe.skipIf(backend.unavailable() !== null)(`session budgets on ${backend.name}`, () => {
    let fake: FakeModelServer;
    let t: TestServer;
    let client: Anthropic;
    let environmentId: string;
    let agentId: string;

    beforeAll(async () => {
      fake = await startFakeAnthropic();
      t = await startTestServer({
        databaseUrl: await backend.databaseUrl(),
        allowWeakerTiers: true,
        env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
      });
      client = t.client;
      // Tier "none": the bash call of the first scenario runs on the host, no sandbox needed.
      environmentId = (
        await client.beta.environments.create({
          name: "budgets",
          config: { type: "cloud", sandbox: { tier: "none" } } as never,
        })
      ).id;
      agentId = (
        await client.beta.agents.create({ name: "budgeted", model: MODEL, tools: [TOOLSET] as never })
      ).id;
    });
    afterAll(async () => {
      await t?.close();
      await fake?.close();
      for (const drop of drops.splice(0)) await drop();
    });

    const idles = (events: WireEvent[]) => events.filter((e) => e.type === "session.status_idle");
    const say = (sessionId: string, text: string) =>
      client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] });
    const rejection = async (call: Promise<unknown>, reason: string) => {
      const error = await expectApiError(call, Anthropic.BadRequestError, BAD_REQUEST);
      expect((error.error as { error: { details?: unknown } }).error.details).toEqual({ error_code: reason });
      return error;
    };

    it("a run's second model request is refused once the list cost reached the budget: the turn ends budget_reached", async () => {
      const requestsBefore = fake.requests.length;
      fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo hi" }, usage: SIX_CENTS });
      const session = await client.beta.sessions.create({
        agent: agentId,
        environment_id: environmentId,
        budget: budget("6"),
      });
      expect(session.budget).toEqual(budget("6"));
      await say(session.id, "run echo, then tell me about it");
      const events = await waitForHistory(client, session.id, (h) => idles(h).length >= 1, 15_000);

      // The first request ran (and its tool), the second was never sent.
      expect(fake.requests.length - requestsBefore).toBe(1);
      expect(events.filter((e) => e.type === "agent.tool_result")).toHaveLength(1);
      expect(events.filter((e) => e.type === "span.model_request_start")).toHaveLength(1);
      expect(stopReason(idles(events)[0])).toEqual({ type: "budget_reached" });
      const usage = events.find((e) => e.type === "session.usage");
      expect(usage).toMatchObject({
        usage: {
          input_tokens: 10_000,
          output_tokens: 2_000,
          list_cost: { amount: "6", currency: "USD" },
          active_seconds: expect.any(Number),
        },
        budget: budget("6"),
      });

      const spent = await client.beta.sessions.retrieve(session.id);
      expect(spent.status).toBe("idle");
      expect(spent.usage).toMatchObject({
        input_tokens: 10_000,
        output_tokens: 2_000,
        list_cost: { amount: "6", currency: "USD" },
      });
      expect(spent.stats.active_seconds).toBeGreaterThan(0);
      expect(spent.usage.active_seconds).toBe(spent.stats.active_seconds);

      // A cap at or below what was spent is not a raise.
      await rejection(client.beta.sessions.update(session.id, { budget: budget("6") }), "budget_not_raised");
      await rejection(client.beta.sessions.update(session.id, { budget: budget("5") }), "budget_not_raised");
      // Raised: the next turn's request runs (6 → 12 cents), and the one after is refused again.
      const raised = await client.beta.sessions.update(session.id, { budget: budget("7") });
      expect(raised.budget).toEqual(budget("7"));
      fake.enqueue({ kind: "text", text: "echo printed hi", usage: SIX_CENTS });
      await say(session.id, "go on");
      await waitForHistory(client, session.id, (h) => idles(h).length >= 2, 15_000);
      await say(session.id, "and again");
      const after = await waitForHistory(client, session.id, (h) => idles(h).length >= 3, 15_000);
      expect(fake.requests.length - requestsBefore).toBe(2);
      expect(idles(after).map((e) => stopReason(e)?.type)).toEqual([
        "budget_reached",
        "end_turn",
        "budget_reached",
      ]);
      expect(after.find((e) => e.type === "session.updated")).toMatchObject({ budget: budget("7") });
      const usages = after.filter((e) => e.type === "session.usage");
      expect(usages.map((e) => (e.usage as { list_cost: { amount: string } }).list_cost.amount)).toEqual([
        "6",
        "12",
      ]);
      expect(usages.map((e) => e.budget)).toEqual([budget("6"), budget("7")]);
      const final = await client.beta.sessions.retrieve(session.id);
      expect(final.usage).toMatchObject({
        input_tokens: 20_000,
        list_cost: { amount: "12", currency: "USD" },
      });
    });

    it("update rules: a budget is set at creation only, removal is final, a cap must exceed what was spent", async () => {
      const uncapped = await client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
      expect(uncapped.budget).toBeNull();
      expect(uncapped.usage.list_cost).toEqual({ amount: "0", currency: "USD" });
      await rejection(
        client.beta.sessions.update(uncapped.id, { budget: budget("100") }),
        "budget_create_only",
      );

      const capped = await client.beta.sessions.create({
        agent: agentId,
        environment_id: environmentId,
        budget: budget("100"),
      });
      // Nothing spent yet: even 0 is not above it.
      await rejection(client.beta.sessions.update(capped.id, { budget: budget("0") }), "budget_not_raised");
      // An unchanged budget changes nothing and says nothing.
      await client.beta.sessions.update(capped.id, { budget: budget("100") });
      const lowered = await client.beta.sessions.update(capped.id, { budget: budget("50") });
      expect(lowered.budget).toEqual(budget("50"));
      const removed = await client.beta.sessions.update(capped.id, { budget: null });
      expect(removed.budget).toBeNull();
      await rejection(
        client.beta.sessions.update(capped.id, { budget: budget("100") }),
        "budget_create_only",
      );
      const updates = (await history(client, capped.id)).filter((e) => e.type === "session.updated");
      expect(updates.map((e) => e.budget)).toEqual([budget("50"), null]);
      expect((await client.beta.sessions.retrieve(capped.id)).budget).toBeNull();
    });

    it("a model without a list price cannot be budgeted", async () => {
      const unpriced = await client.beta.agents.create({ name: "unpriced", model: "claude-unpriced-0" });
      await rejection(
        client.beta.sessions.create({
          agent: unpriced.id,
          environment_id: environmentId,
          budget: budget("100"),
        }),
        "model_not_budgetable",
      );
      // A priced agent whose advisor model has no list price cannot be budgeted either.
      const advised = await client.beta.agents.create({
        name: "advised",
        model: MODEL,
        multiagent: { type: "multiagent_20261001", advisor: { type: "enabled", model: "claude-unpriced-0" } },
      } as never);
      // (An agent that delegates needs its sandbox before the first tool call.)
      const eager = await client.beta.environments.create({
        name: "eager",
        config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
      });
      await rejection(
        client.beta.sessions.create({
          agent: advised.id,
          environment_id: eager.id,
          budget: budget("100"),
        }),
        "model_not_budgetable",
      );
      // Without a budget it runs, and its list cost is unknown rather than zero.
      const session = await client.beta.sessions.create({
        agent: unpriced.id,
        environment_id: environmentId,
      });
      fake.enqueue({ kind: "text", text: "hello", usage: SIX_CENTS });
      await say(session.id, "hi");
      const events = await waitForHistory(client, session.id, (h) => idles(h).length >= 1, 15_000);
      const usage = events.find((e) => e.type === "session.usage")?.usage as Record<string, unknown>;
      expect(usage.input_tokens).toBe(10_000);
      expect(usage).not.toHaveProperty("list_cost");
      expect((await client.beta.sessions.retrieve(session.id)).usage.list_cost).toBeNull();
    });

    it("stats: running time from the committed status changes; a terminated session's clock stops", async () => {
      const session = await client.beta.sessions.create({
        agent: agentId,
        environment_id: environmentId,
        budget: budget("1000"),
      });
      expect(session.stats).toEqual({ active_seconds: 0, duration_seconds: 0 });
      fake.enqueue({ kind: "text", text: "slowly", chunkDelayMs: 150, usage: SIX_CENTS });
      await say(session.id, "answer slowly");
      await waitForHistory(client, session.id, (h) => idles(h).length >= 1, 15_000);
      const idle = await client.beta.sessions.retrieve(session.id);
      const active = idle.stats.active_seconds ?? 0;
      expect(active).toBeGreaterThan(0);
      await sleep(300);
      // Idle time is not running time.
      expect((await client.beta.sessions.retrieve(session.id)).stats.active_seconds).toBe(active);

      await client.beta.sessions.archive(session.id);
      // A terminated session's budget is settled.
      await expectApiError(
        client.beta.sessions.update(session.id, { budget: budget("2000") }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: [/terminated/] },
      );
      const ended = await client.beta.sessions.retrieve(session.id);
      await sleep(1_100);
      const later = await client.beta.sessions.retrieve(session.id);
      expect(later.stats).toEqual(ended.stats);
      expect(later.stats.active_seconds).toBe(active);
    });
  });
}
