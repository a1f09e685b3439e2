/**
 * Two replicas on one PostgreSQL database: a key revoked on replica A ends the streams it opened
 * on replica B, once B's authentication cache lets the revocation through and the stream's next
 * re-check sees it. Over real HTTP through the official SDK.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_AUTH_CACHE_MS } from "../../src/control/iamService.js";
import { CREDENTIAL_RECHECK_MS } from "../../src/edge/http/credentialLifetime.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, StreamReader } from "../support/sdkHelpers.js";
import { openSse, type SseStream } from "../support/sseStreams.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** B's cache of the key's answer, one re-check after it, and slack for a busy machine. */
const REVOKED_ON_ANOTHER_REPLICA_WITHIN_MS = DEFAULT_AUTH_CACHE_MS + CREDENTIAL_RECHECK_MS + 5_000;

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

describe("a key revoked on one replica", () => {
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
