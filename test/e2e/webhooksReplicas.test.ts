/**
 * Webhook delivery with two replicas on one PostgreSQL database, both following sessions and
 * polling the outbox fast: every session's events reach the endpoint once each (a session gets one
 * cursor whichever replica sees it first, its events are derived once per fact, and each delivery
 * is leased to one replica at a time), verified by the SDK's `unwrap()`.
 */
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { MODEL, userMessage } from "../support/sdkHelpers.js";
import { LOOPBACK, startTestServer, type TestServer } from "../support/testServer.js";
import { startWebhookReceiver } from "../support/webhookReceiver.js";

const unwrapper = new Anthropic({ apiKey: "unused" });
let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>> | undefined;
let key = "";
const servers: TestServer[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
  receiver = await startWebhookReceiver({
    verify: (raw, headers) => unwrapper.beta.webhooks.unwrap(raw, { headers, key }),
  });
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await receiver?.close();
  await schema?.drop();
  schema = undefined;
});

describe("webhooks with replicas on PostgreSQL", () => {
  it("delivers each session's events once, whichever replica follows it", async () => {
    const common = {
      databaseUrl: schema!.url,
      workerPollMs: 50,
      allowPushHosts: LOOPBACK,
      push: { pollMs: 10, idlePollMs: 100, retryBaseMs: 50 },
    };
    const a = await startTestServer(common);
    servers.push(a);
    const b = await startTestServer({ ...common, workers: 0 });
    servers.push(b);
    const endpoint = await a.client.beta.organization.webhooks.create({
      url: receiver!.url,
      enabled_events: ["session.created", "session.running", "session.idled"] as never,
    });
    key = endpoint.signing_secret;
    const agent = await a.client.beta.agents.create({ name: "hook replicas", model: MODEL });
    const environment = await a.client.beta.environments.create({ name: "hook replicas" });
    const sessions = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const client = (i % 2 === 0 ? a : b).client;
        const session = await client.beta.sessions.create({
          agent: agent.id,
          environment_id: environment.id,
        });
        await client.beta.sessions.events.send(session.id, { events: [userMessage(`session ${i}`)] });
        return session.id;
      }),
    );
    const typesOf = (id: string) =>
      receiver!
        .accepted()
        .filter((p) => p.body?.data?.id === id)
        .map((p) => p.body.data.type);
    await receiver!.waitFor(() => sessions.every((id) => typesOf(id).includes("session.idled")), 30_000);
    expect(receiver!.received.every((p) => p.verified)).toBe(true);
    for (const id of sessions) {
      expect(typesOf(id)).toEqual(["session.created", "session.running", "session.idled"]);
    }
    const ids = receiver!.received.map((p) => p.headers["webhook-id"]);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
