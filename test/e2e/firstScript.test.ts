import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

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

describe("the first script through the official SDK", () => {
  it("creates an agent, environment and session, streams one turn and lists the history", async () => {
    const client: Anthropic = t.client;
    const agent = await client.beta.agents.create({ name: "First", model: "claude-sonnet-4-6" });
    expect(agent.version).toBe(1);
    expect(agent.model).toEqual({ id: "claude-sonnet-4-6" });
    const env = await client.beta.environments.create({ name: "default" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    expect(session.status).toBe("idle");

    const stream = await client.beta.sessions.events.stream(session.id);
    await client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "hello there" }] }],
    });
    const seen = await collectUntilIdle(stream);
    expect(seen.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    const message = seen.find((e) => e.type === "agent.message") as unknown as {
      content: Array<{ text: string }>;
    };
    expect(message.content[0]?.text).toBe("[offline model] You said: hello there");

    const history = [];
    for await (const event of client.beta.sessions.events.list(session.id)) history.push(event);
    expect(history.map((e) => e.id)).toEqual(seen.map((e) => e.id));
    const after = await client.beta.sessions.retrieve(session.id);
    expect(after.status).toBe("idle");
  });
});
