/**
 * The protocol edges' streams end at their access token's expiry, each in its protocol's own way,
 * while the turn they follow is still running (the model never answers): the AI SDK chat stream
 * with an `error` chunk, the AG-UI run with a RUN_ERROR, the A2A message stream by closing.
 * Through the official clients where the protocol has one, over real HTTP.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aClientAt, describeEvent, userRequest } from "../support/a2aClient.js";
import { agUiAgent, recordRun, say } from "../support/agUiAgent.js";
import { readChunks } from "../support/aiSdkChat.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const TTL_SECONDS = 3;
/** A token's streams end at its expiry (a timer set for it), give or take this. */
const EXPIRY_SLACK_MS = 1_500;

let fake: FakeModelServer;
let t: TestServer;
let agentId: string;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  // Every turn hangs in the model: only the credential can end these streams.
  fake.setFallback({ kind: "hang" });
  t = await startTestServer({ env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
  agentId = (await t.client.beta.agents.create({ name: "hanging", model: MODEL })).id;
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function mintToken(): Promise<{ token: string; expiresAt: number }> {
  const response = await fetch(`${t.server.url}/v1/awaken/access_tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ operations: ["read", "send", "create"], ttl_seconds: TTL_SECONDS }),
  });
  const json = (await response.json()) as { token: string; expires_at: string };
  expect(response.status, JSON.stringify(json)).toBe(200);
  return { token: json.token, expiresAt: Date.parse(json.expires_at) };
}

/** `work` settles between the token's expiry and the slack after it. */
async function endsAtExpiry<T>(expiresAt: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error("the stream outlived its token")),
      expiresAt - Date.now() + EXPIRY_SLACK_MS,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - EXPIRY_SLACK_MS);
  }
}

describe("a token's protocol streams end at its expiry", () => {
  it("the AI SDK chat stream ends with an error chunk that says why", async () => {
    const { token, expiresAt } = await mintToken();
    const response = await fetch(`${t.server.url}/v1/ai-sdk/chat`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": token },
      body: JSON.stringify({
        id: `chat-${randomUUID()}`,
        trigger: "submit-message",
        agentId,
        messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] }],
      }),
    });
    expect(response.status).toBe(200);
    const chunks = await endsAtExpiry(expiresAt, readChunks(response));
    expect(chunks.at(-1)).toMatchObject({
      type: "error",
      errorText: expect.stringMatching(/expired or was revoked/),
    });
  });

  it("the AG-UI run ends with a RUN_ERROR that says why", async () => {
    const { token, expiresAt } = await mintToken();
    const agent = agUiAgent(t, agentId, undefined, { headers: { "x-api-key": token } });
    say(agent, "hello");
    const outcome = await endsAtExpiry(
      expiresAt,
      recordRun(agent).then(
        (run) => run.runError?.message ?? `no RUN_ERROR; saw ${run.types.join(", ")}`,
        (error: Error) => error.message,
      ),
    );
    expect(outcome).toMatch(/expired or was revoked/);
  });

  it("the A2A message stream closes", async () => {
    const { token, expiresAt } = await mintToken();
    const client = await a2aClientAt(t.server.url, agentId, "JSONRPC", token);
    const seen: string[] = [];
    const read = (async () => {
      for await (const event of client.sendMessageStream(userRequest("hello")))
        seen.push(describeEvent(event));
    })().catch(() => undefined);
    await endsAtExpiry(expiresAt, read);
    expect(seen[0]).toBe("task:SUBMITTED");
    expect(seen.at(-1)).not.toMatch(/COMPLETED|FAILED|CANCELED/);
  });
});
