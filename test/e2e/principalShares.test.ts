/**
 * One credential holds at most its share of a workspace's hint streams and MCP sessions on a
 * replica: a token handed to a browser cannot lock the workspace's admin out, take the admin's MCP
 * session, or keep its slots once it has expired. Over real HTTP (the official MCP client for the
 * admin's session).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { principalShareOf } from "../../src/edge/http/principalShares.js";
import { MAX_HINT_STREAMS_PER_WORKSPACE } from "../../src/edge/managed-agents/routes/sessionHintRoutes.js";
import { DEFAULT_MCP_SESSION_LIMITS } from "../../src/edge/mcp/mcpSessions.js";
import { connectMcp } from "../support/mcpClient.js";
import { OffsetClock } from "../support/offsetClock.js";
import { initializeMcp, openSse, type SseStream } from "../support/sseStreams.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const HINT_SHARE = principalShareOf(MAX_HINT_STREAMS_PER_WORKSPACE);
const MCP_SHARE = principalShareOf(DEFAULT_MCP_SESSION_LIMITS.perWorkspace);

let t: TestServer;
/** The server's clock: a test moves it past tokens' expiry rather than sleeping it out. */
const clock = new OffsetClock();
const streams: SseStream[] = [];

beforeAll(async () => {
  t = await startTestServer({ clock });
});
afterEach(async () => {
  await Promise.all(streams.splice(0).map((stream) => stream.close()));
});
afterAll(() => t.close());

async function mintToken(ttlSeconds: number): Promise<{ token: string; expiresAt: number }> {
  const response = await fetch(`${t.server.url}/v1/awaken/access_tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ operations: ["read", "send"], ttl_seconds: ttlSeconds }),
  });
  const json = (await response.json()) as { token: string; expires_at: string };
  expect(response.status, JSON.stringify(json)).toBe(200);
  return { token: json.token, expiresAt: Date.parse(json.expires_at) };
}

async function hintStream(key: string): Promise<SseStream> {
  const stream = await openSse(`${t.server.url}/v1/awaken/sessions/stream`, key);
  streams.push(stream);
  return stream;
}

async function refusedHintStream(key: string): Promise<{ status: number; message: string }> {
  const response = await fetch(`${t.server.url}/v1/awaken/sessions/stream`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const body = (await response.json()) as { error: { message: string } };
  return { status: response.status, message: body.error.message };
}

describe("hint streams", () => {
  it("a token holds at most its share; past it, a 503 that says so, and the admin still opens one", async () => {
    const { token } = await mintToken(600);
    for (let i = 0; i < HINT_SHARE; i++) expect((await hintStream(token)).status).toBe(200);
    const refused = await refusedHintStream(token);
    expect(refused.status).toBe(503);
    expect(refused.message).toContain(`already holds ${HINT_SHARE} hint streams`);
    expect((await hintStream(TEST_API_KEY)).status).toBe(200);
  });

  it("tokens that filled the workspace free their slots when they expire", async () => {
    const tokens = await Promise.all(
      Array.from({ length: MAX_HINT_STREAMS_PER_WORKSPACE / HINT_SHARE }, () => mintToken(3)),
    );
    for (const { token } of tokens)
      for (let i = 0; i < HINT_SHARE; i++) expect((await hintStream(token)).status).toBe(200);
    const full = await refusedHintStream(TEST_API_KEY);
    expect(full.status).toBe(503);
    expect(full.message).toContain(`already holds ${MAX_HINT_STREAMS_PER_WORKSPACE} hint streams`);
    clock.advance(Math.max(...tokens.map((x) => x.expiresAt)) - clock.now() + 1);
    for (const stream of streams) await stream.end();
    expect((await hintStream(TEST_API_KEY)).status).toBe(200);
  });
});

describe("MCP sessions", () => {
  it("a token's sessions past its share are refused, and the admin's session survives them", async () => {
    const admin = await connectMcp(t.server.url);
    try {
      const { token } = await mintToken(600);
      const statuses: number[] = [];
      for (let i = 0; i <= DEFAULT_MCP_SESSION_LIMITS.perWorkspace; i++)
        statuses.push((await initializeMcp(t.server.url, token)).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(MCP_SHARE);
      expect(statuses.slice(MCP_SHARE).every((s) => s === 503)).toBe(true);
      const refused = await initializeMcp(t.server.url, token);
      expect(refused.body).toContain(`already holds ${MCP_SHARE} MCP sessions`);
      expect(Array.isArray((await admin.client.listTools()).tools)).toBe(true);
    } finally {
      await admin.close();
    }
  });
});
