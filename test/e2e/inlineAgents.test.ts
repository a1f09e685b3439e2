/**
 * Inline agents over the SDK: an agent whose subagents allow them defines one in its spawn call;
 * the child runs the parent's definition under the inline name and prompt, shown on its thread as
 * the SDK's `inline` agent (no id, no version). Where inline agents are disabled, the call is an
 * error result and no thread is made.
 */
import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { all, MODEL, runTurn, StreamReader, textOf, type WireEvent } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
let client: Anthropic;
let environmentId: string;

beforeAll(async () => {
  t = await startTestServer();
  client = t.client;
  const environment = await client.beta.environments.create({
    name: "inline-agents",
    config: { type: "cloud", sandbox: { provisioning: "eager" } } as never,
  });
  environmentId = environment.id;
});
afterAll(async () => {
  await t.close();
});

async function turn(agentId: string, text: string): Promise<{ sessionId: string; events: WireEvent[] }> {
  const session = await client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
  const stream = await StreamReader.open(client, session.id);
  try {
    return { sessionId: session.id, events: await runTurn(client, stream, session.id, text) };
  } finally {
    await stream.close();
  }
}

const SPAWN_INLINE =
  'call spawn_agent {"agent":{"name":"critic","system":"You critique.","description":"A second opinion."},"message":"doubt B"}';

describe("inline agents", () => {
  it("a spawn defines an inline agent: its thread runs the parent's model under the inline name and prompt", async () => {
    // Subagents default to enabled with inline agents (the SDK's defaults).
    const lead = await client.beta.agents.create({
      name: "lead",
      model: MODEL,
      system: "You lead.",
      multiagent: { type: "multiagent_20261001" },
    });
    const { sessionId, events } = await turn(lead.id, SPAWN_INLINE);
    const created = events.find((e) => e.type === "session.thread_created");
    expect(created).toMatchObject({ agent_name: "critic", workflow_run_id: null });
    const result = events.find((e) => e.type === "agent.tool_result");
    expect(result?.is_error).toBe(false);
    expect(JSON.stringify(result?.content)).toContain("You said: doubt B");

    const threads = await all(client.beta.sessions.threads.list(sessionId));
    const child = threads.find((th) => th.parent_thread_id !== null);
    expect(child?.agent).toMatchObject({
      type: "inline",
      name: "critic",
      system: "You critique.",
      description: "A second opinion.",
      model: { id: MODEL },
    });
    expect(child?.agent).not.toHaveProperty("id");
    expect(child?.agent).not.toHaveProperty("version");
    const retrieved = await client.beta.sessions.threads.retrieve(child!.id, { session_id: sessionId });
    expect(retrieved.agent).toEqual(child?.agent);
  });

  it("where inline agents are disabled, an inline spawn is an error result and makes no thread", async () => {
    const researcher = await client.beta.agents.create({ name: "researcher", model: MODEL });
    const lead = await client.beta.agents.create({
      name: "strict-lead",
      model: MODEL,
      multiagent: {
        type: "multiagent_20261001",
        subagents: {
          type: "enabled",
          inline_agents: { type: "disabled" },
          predefined_agents: [researcher.id],
        },
      },
    });
    const { sessionId, events } = await turn(lead.id, SPAWN_INLINE);
    const result = events.find((e) => e.type === "agent.tool_result");
    expect(result?.is_error).toBe(true);
    expect(textOf(result)).toContain("cannot define inline agents");
    expect(events.some((e) => e.type === "session.thread_created")).toBe(false);
    expect(await all(client.beta.sessions.threads.list(sessionId))).toHaveLength(1);
  });
});
