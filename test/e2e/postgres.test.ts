import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// The same first script as firstScript.test.ts, on PostgreSQL: a fresh, empty schema that the
// server migrates itself when it starts, selected through the URL as an operator would.
let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
const servers: TestServer[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await schema?.drop();
  schema = undefined;
});

async function start(): Promise<TestServer> {
  const server = await startTestServer({ databaseUrl: schema!.url });
  servers.push(server);
  return server;
}

async function collectUntilIdle(
  stream: AsyncIterable<{ type: string }>,
): Promise<Array<{ type: string } & Record<string, unknown>>> {
  const seen: Array<{ type: string } & Record<string, unknown>> = [];
  for await (const event of stream) {
    seen.push(event as { type: string } & Record<string, unknown>);
    if (event.type === "session.status_idle") break;
  }
  return seen;
}

async function oneTurn(client: Anthropic, sessionId: string, text: string) {
  const stream = await client.beta.sessions.events.stream(sessionId);
  await client.beta.sessions.events.send(sessionId, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
  return collectUntilIdle(stream);
}

async function history(client: Anthropic, sessionId: string) {
  const events = [];
  for await (const event of client.beta.sessions.events.list(sessionId)) events.push(event);
  return events as Array<{ id: string; type: string } & Record<string, unknown>>;
}

const ONE_TURN = [
  "user.message",
  "session.status_running",
  "span.model_request_start",
  "agent.message",
  "span.model_request_end",
  "session.usage",
  "session.status_idle",
];

describe("the first script through the official SDK, on PostgreSQL", () => {
  it("creates an agent, environment and session, streams one turn and lists the history", async () => {
    const t = await start();
    expect(t.server.storage).toContain(`schema ${schema!.schema}`);
    const client = t.client;
    const agent = await client.beta.agents.create({ name: "First", model: "claude-sonnet-4-6" });
    expect(agent.version).toBe(1);
    expect(agent.model).toEqual({ id: "claude-sonnet-4-6" });
    const env = await client.beta.environments.create({ name: "default" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    expect(session.status).toBe("idle");

    const seen = await oneTurn(client, session.id, "hello there");
    expect(seen.map((e) => e.type)).toEqual(ONE_TURN);
    const message = seen.find((e) => e.type === "agent.message") as unknown as {
      content: Array<{ text: string }>;
    };
    expect(message.content[0]?.text).toBe("[offline model] You said: hello there");

    expect((await history(client, session.id)).map((e) => e.id)).toEqual(seen.map((e) => e.id));
    expect((await client.beta.sessions.retrieve(session.id)).status).toBe("idle");
  });

  it("a restart on the same database keeps the agent, the session and its history, and runs the next turn", async () => {
    const first = await start();
    const agent = await first.client.beta.agents.create({ name: "Durable", model: "claude-sonnet-4-6" });
    const env = await first.client.beta.environments.create({ name: "default" });
    const session = await first.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const turn1 = await oneTurn(first.client, session.id, "before the restart");
    const before = await history(first.client, session.id);
    expect(before.map((e) => e.id)).toEqual(turn1.map((e) => e.id));
    await first.close();

    const second = await start();
    expect((await second.client.beta.agents.retrieve(agent.id)).name).toBe("Durable");
    expect((await second.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
    expect(await history(second.client, session.id)).toEqual(before);

    const turn2 = await oneTurn(second.client, session.id, "after the restart");
    expect(turn2.map((e) => e.type)).toEqual(ONE_TURN);
    const message = turn2.find((e) => e.type === "agent.message") as unknown as {
      content: Array<{ text: string }>;
    };
    expect(message.content[0]?.text).toBe("[offline model] You said: after the restart");
    const after = await history(second.client, session.id);
    expect(after.map((e) => e.id)).toEqual([...before, ...turn2].map((e) => e.id));
  });
});
