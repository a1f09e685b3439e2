/**
 * `max_tokens` of real model requests, read on the Anthropic wire by the fake provider: the agent's
 * `awaken.max_tokens` metadata, capped at the model's limit from the provider's model list; else
 * that limit; else 4096. A malformed setting is ignored.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { isEndTurnIdle, MODEL, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

/** Listed by the fake with `max_tokens: 64000`. */
const LISTED = MODEL;
const UNLISTED = "claude-unlisted-9";

let fake: FakeModelServer;
let t: TestServer;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  fake.setModels([LISTED]);
  fake.setFallback({ kind: "text", text: "ok" });
  t = await startTestServer({ env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

/** Runs one turn of an agent and answers the `max_tokens` its model request carried. */
async function maxTokensOf(model: string, metadata?: Record<string, string>): Promise<unknown> {
  const agent = await t.client.beta.agents.create({
    name: "budget",
    model,
    ...(metadata ? { metadata } : {}),
  });
  const environment = await t.client.beta.environments.create({ name: "budget" });
  const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
  const before = fake.requests.length;
  await t.client.beta.sessions.events.send(session.id, {
    events: [{ type: "user.message", content: [{ type: "text", text: "hi" }] }],
  });
  await waitForHistory(t.client, session.id, (h) => h.at(-1) !== undefined && isEndTurnIdle(h.at(-1)!));
  const sent = fake.requests.slice(before).filter((r) => Array.isArray(r.body.messages));
  expect(sent).toHaveLength(1);
  return sent[0]?.body.max_tokens;
}

describe("max_tokens of a model request", () => {
  it("is 4096 when the agent sets none, without waiting on the provider's model list", async () => {
    expect(await maxTokensOf(LISTED)).toBe(4096);
  });

  it("is the agent's awaken.max_tokens setting", async () => {
    expect(await maxTokensOf(LISTED, { "awaken.max_tokens": "1234" })).toBe(1234);
  });

  it("is capped at the model's limit", async () => {
    expect(await maxTokensOf(LISTED, { "awaken.max_tokens": "200000" })).toBe(64_000);
  });

  it("is 4096 for a model the list does not know, and a malformed setting is ignored", async () => {
    expect(await maxTokensOf(UNLISTED)).toBe(4096);
    expect(await maxTokensOf(UNLISTED, { "awaken.max_tokens": "-5" })).toBe(4096);
    expect(await maxTokensOf(UNLISTED, { "awaken.max_tokens": "700" })).toBe(700);
  });
});
