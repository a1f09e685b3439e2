/**
 * Two replicas on one PostgreSQL database: a key revoked on replica A is refused by replica B at
 * once (the revocation's NOTIFY drops B's cached answers before A answers), and the streams it
 * opened on B end at their next re-check, not when B's cache would expire. Over real HTTP through
 * the official SDK.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_AUTH_CACHE_MS } from "../../src/control/iamService.js";
import { CREDENTIAL_RECHECK_MS } from "../../src/edge/http/credentialLifetime.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, StreamReader } from "../support/sdkHelpers.js";
import { openSse, type SseStream } from "../support/sseStreams.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** One re-check, and slack for a busy machine: well inside B's authentication cache. */
const REVOKED_ON_ANOTHER_REPLICA_WITHIN_MS = CREDENTIAL_RECHECK_MS + 5_000;

let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
const servers: TestServer[] = [];
const streams: Array<{ close(): unknown }> = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
});
afterEach(async () => {
  for (const stream of streams.splice(0)) await stream.close();
  for (const server of servers.splice(0)) await server.close();
  await schema?.drop();
  schema = undefined;
});

async function call(url: string, key: string, method = "GET", body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

describe("a key revoked on one replica", () => {
  it("the bound proves the notice: it is shorter than a replica's authentication cache", () => {
    expect(REVOKED_ON_ANOTHER_REPLICA_WITHIN_MS).toBeLessThan(DEFAULT_AUTH_CACHE_MS);
  });

  it("is refused by another replica at once, and so are the access tokens it minted", async () => {
    const a = await startTestServer({ databaseUrl: schema!.url });
    servers.push(a);
    const b = await startTestServer({ databaseUrl: schema!.url, workers: 0 });
    servers.push(b);
    const created = await call(`${a.server.url}/v1/awaken/api_keys`, TEST_API_KEY, "POST", {
      role: "runtime",
    });
    expect(created.status).toBe(200);
    const key = created.json as { id: string; key: string };
    const minted = await call(`${a.server.url}/v1/awaken/access_tokens`, key.key, "POST", {
      operations: ["read"],
      ttl_seconds: 600,
    });
    expect(minted.status).toBe(200);
    const token = minted.json.token as string;
    // B answers both once, so it holds the key's answer and the token's minter in its caches.
    expect((await call(`${b.server.url}/v1/sessions`, key.key)).status).toBe(200);
    expect((await call(`${b.server.url}/v1/sessions`, token)).status).toBe(200);

    const revoked = await call(`${a.server.url}/v1/awaken/api_keys/${key.id}/revoke`, TEST_API_KEY, "POST");
    expect(revoked.status).toBe(200);
    expect((await call(`${b.server.url}/v1/sessions`, key.key)).status).toBe(401);
    expect((await call(`${b.server.url}/v1/sessions`, token)).status).toBe(401);
  });

  it(
    "ends the session stream and the hint stream it opened on another",
    async () => {
      const a = await startTestServer({ databaseUrl: schema!.url });
      servers.push(a);
      const b = await startTestServer({ databaseUrl: schema!.url, workers: 0 });
      servers.push(b);
      const created = await fetch(`${a.server.url}/v1/awaken/api_keys`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ role: "runtime" }),
      });
      const key = (await created.json()) as { id: string; key: string };
      expect(created.status).toBe(200);

      const agent = await a.client.beta.agents.create({ name: "replicas", model: MODEL });
      const environment = await a.client.beta.environments.create({ name: "replicas" });
      const session = await a.client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
      });
      const onB = new Anthropic({ apiKey: key.key, baseURL: b.server.url, maxRetries: 0 });
      const reader = await StreamReader.open(onB, session.id);
      streams.push(reader);
      const hints: SseStream = await openSse(`${b.server.url}/v1/awaken/sessions/stream`, key.key);
      streams.push(hints);
      expect(hints.status).toBe(200);

      const revoked = await fetch(`${a.server.url}/v1/awaken/api_keys/${key.id}/revoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_API_KEY}` },
      });
      expect(revoked.status).toBe(200);
      const started = Date.now();
      await reader.end(REVOKED_ON_ANOTHER_REPLICA_WITHIN_MS);
      await hints.end(REVOKED_ON_ANOTHER_REPLICA_WITHIN_MS - (Date.now() - started));
      expect(reader.error).toBeNull();
    },
    REVOKED_ON_ANOTHER_REPLICA_WITHIN_MS + 30_000,
  );
});
