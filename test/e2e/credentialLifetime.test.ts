/**
 * A long-lived response lives no longer than the credential it was opened with: the Managed
 * session stream, the session hint stream and an MCP session's stream end when their API key is
 * revoked or their access token expires, and a sessions token's stream when its delivery is over.
 * Over real HTTP, the official SDK where there is one.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CREDENTIAL_RECHECK_MS } from "../../src/edge/http/credentialLifetime.js";
import { MODEL, StreamReader } from "../support/sdkHelpers.js";
import { clientAs, selfHostedEnvironment, sessionsToken } from "../support/selfHosted.js";
import { openMcpStream, openSse, type SseStream } from "../support/sseStreams.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** A revocation reaches this process's streams within one re-check, plus slack for a busy machine. */
const REVOKED_WITHIN_MS = CREDENTIAL_RECHECK_MS + 3_000;
/** A token's streams end at its expiry (a timer set for it), give or take this. */
const EXPIRY_SLACK_MS = 1_500;

let t: TestServer;
let agentId: string;
let environmentId: string;
const open: Array<{ close(): unknown }> = [];

beforeAll(async () => {
  t = await startTestServer();
  agentId = (await t.client.beta.agents.create({ name: "streams", model: MODEL })).id;
  environmentId = (await t.client.beta.environments.create({ name: "streams" })).id;
});
afterEach(async () => {
  for (const stream of open.splice(0)) await stream.close();
});
afterAll(() => t.close());

async function call(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function mintKey(): Promise<{ id: string; key: string }> {
  const { status, json } = await call("POST", "/v1/awaken/api_keys", TEST_API_KEY, { role: "runtime" });
  expect(status, JSON.stringify(json)).toBe(200);
  return json as unknown as { id: string; key: string };
}

async function revoke(keyId: string): Promise<void> {
  expect((await call("POST", `/v1/awaken/api_keys/${keyId}/revoke`, TEST_API_KEY)).status).toBe(200);
}

async function mintToken(by: string, ttlSeconds: number): Promise<{ token: string; expiresAt: number }> {
  const { status, json } = await call("POST", "/v1/awaken/access_tokens", by, {
    operations: ["read", "send"],
    ttl_seconds: ttlSeconds,
  });
  expect(status, JSON.stringify(json)).toBe(200);
  return { token: json.token as string, expiresAt: Date.parse(json.expires_at as string) };
}

async function sessionStream(key: string): Promise<StreamReader> {
  const client = new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });
  const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
  const reader = await StreamReader.open(client, session.id);
  open.push(reader);
  return reader;
}

async function hintStream(key: string): Promise<SseStream> {
  const stream = await openSse(`${t.server.url}/v1/awaken/sessions/stream`, key);
  open.push(stream);
  expect(stream.status).toBe(200);
  return stream;
}

/** Still open after `ms`: a stream that should outlive a moment does. */
async function stillOpenAfter(stream: { ended: boolean }, ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
  expect(stream.ended).toBe(false);
}

describe("a revoked API key ends the streams it opened", () => {
  it("the Managed session stream ends within a re-check of the revocation", async () => {
    const { id, key } = await mintKey();
    const reader = await sessionStream(key);
    await stillOpenAfter(reader, 300);
    await revoke(id);
    await reader.end(REVOKED_WITHIN_MS);
    expect(reader.error).toBeNull();
  });

  it("the session hint stream ends within a re-check of the revocation", async () => {
    const { id, key } = await mintKey();
    const stream = await hintStream(key);
    await stream.until((frame) => frame.includes("sessions.changed"));
    await revoke(id);
    await stream.end(REVOKED_WITHIN_MS);
  });

  it("an MCP session's stream ends, and the session with it", async () => {
    const { id, key } = await mintKey();
    const mcp = await openMcpStream(t.server.url, key);
    open.push(mcp);
    await stillOpenAfter(mcp.stream, 300);
    await revoke(id);
    await mcp.stream.end(REVOKED_WITHIN_MS);
  });

  it("a key that stays valid keeps its stream past several re-checks", async () => {
    const { key } = await mintKey();
    const stream = await hintStream(key);
    await stillOpenAfter(stream, CREDENTIAL_RECHECK_MS * 2 + 500);
  });
});

describe("an access token's streams end when it expires", () => {
  it("the Managed session stream ends at the token's expiry", async () => {
    const { token, expiresAt } = await mintToken(TEST_API_KEY, 3);
    const reader = await sessionStream(token);
    await reader.end(expiresAt - Date.now() + EXPIRY_SLACK_MS);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - EXPIRY_SLACK_MS);
  });

  it("the session hint stream ends at the token's expiry", async () => {
    const { token, expiresAt } = await mintToken(TEST_API_KEY, 3);
    const stream = await hintStream(token);
    await stream.end(expiresAt - Date.now() + EXPIRY_SLACK_MS);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - EXPIRY_SLACK_MS);
  });

  it("an MCP session's stream ends at the token's expiry", async () => {
    const { token, expiresAt } = await mintToken(TEST_API_KEY, 3);
    const mcp = await openMcpStream(t.server.url, token);
    open.push(mcp);
    await mcp.stream.end(expiresAt - Date.now() + EXPIRY_SLACK_MS);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt - EXPIRY_SLACK_MS);
  });
});

describe("a work item's sessions token", () => {
  it("its session stream ends when the work is stopped: the token's delivery is over", async () => {
    const setup = await selfHostedEnvironment(t);
    const env = setup.environment.id;
    const session = await t.client.beta.sessions.create({ agent: setup.agent.id, environment_id: env });
    const polled = await setup.worker.beta.environments.work.poll(env);
    const reader = await StreamReader.open(clientAs(t, sessionsToken(polled?.secret)), session.id);
    open.push(reader);
    await stillOpenAfter(reader, 300);
    await t.client.beta.environments.work.stop(polled!.id, { environment_id: env, force: true });
    await reader.end(REVOKED_WITHIN_MS);
  });
});
