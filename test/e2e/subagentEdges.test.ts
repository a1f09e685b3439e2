/**
 * A subagent's work as the protocols' official clients see it: the AI SDK chat (`ai` 6 and 7) and
 * AG-UI's HttpAgent each send one message to an agent with a roster, and the same streamed turn
 * carries the spawn call, the child's answer as that call's output (the child runs as its own
 * thread) and the parent's answer made from it. The A2A and MCP clients, which name no
 * environment, get the parent's answer made from the child's; their session starts in the
 * workspace's eager default environment, since an agent with subagents needs its sandbox first.
 */
import { randomUUID } from "node:crypto";
import { EventType } from "@ag-ui/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aClient, partsText, stateName, userRequest } from "../support/a2aClient.js";
import { agUiAgent, recordRun, say } from "../support/agUiAgent.js";
import { aiSdkChat } from "../support/aiSdkChat.js";
import { AI_SDK_CLIENTS } from "../support/aiSdkClients.js";
import { connectMcp } from "../support/mcpClient.js";
import { all } from "../support/sdkHelpers.js";
import { leadWithResearcher } from "../support/subagentSetup.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
let agentId: string;
let environmentId: string;
beforeAll(async () => {
  t = await startTestServer();
  ({ leadId: agentId, environmentId } = await leadWithResearcher(t.client, "ui-edge-subagents"));
});
afterAll(async () => {
  await t.close();
});

describe.each(AI_SDK_CLIENTS)("$label", ({ ai }) => {
  it("one turn shows the spawn, the child's answer as its output, and the parent's answer", async () => {
    const h = aiSdkChat({
      ai,
      baseUrl: t.server.url,
      apiKey: TEST_API_KEY,
      id: `chat-${randomUUID()}`,
      body: { agentId, environmentId },
    });
    await h.chat.sendMessage({ text: 'call spawn_agent {"agent_name":"researcher","message":"find A"}' });
    await h.waitForFinishes(1, 30_000);
    expect(h.errors).toEqual([]);
    const answer = h.chat.messages.at(-1);
    expect(answer?.role).toBe("assistant");
    const spawn = answer?.parts.find((p) => p.type === "tool-spawn_agent") as
      | { state: string; input: unknown; output: unknown }
      | undefined;
    expect(spawn).toMatchObject({ state: "output-available", input: { agent_name: "researcher" } });
    expect(JSON.stringify(spawn?.output)).toContain("You said: find A");
    const texts = answer?.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])) ?? [];
    expect(texts.at(-1)).toContain("You said: find A");

    // The child ran as a thread of the chat's session, with its own history.
    const threads = await all(t.client.beta.sessions.threads.list(h.sessionId()!));
    expect(threads).toHaveLength(2);
  });
});

describe("AG-UI", () => {
  it("one run shows the spawn, the child's answer as its result, and the parent's answer", async () => {
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    const client = agUiAgent(t, agentId, session.id);
    say(client, 'call spawn_agent {"agent_name":"researcher","message":"find B"}');
    const run = await recordRun(client);
    expect(run.finished).toMatchObject({ outcome: { type: "success" } });
    const start = run.events.find((e) => e.type === EventType.TOOL_CALL_START) as
      | { toolCallId: string; toolCallName: string }
      | undefined;
    expect(start?.toolCallName).toBe("spawn_agent");
    const result = run.events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as
      | { toolCallId: string; content: string }
      | undefined;
    expect(result?.toolCallId).toBe(start?.toolCallId);
    expect(result?.content).toContain("You said: find B");
    const last = run.result.newMessages.at(-1) as { role: string; content?: string } | undefined;
    expect(last?.role).toBe("assistant");
    expect(last?.content).toContain("You said: find B");
  });
});

describe("A2A and MCP", () => {
  it("an A2A task's answer is made from the child's, in a session of the eager default environment", async () => {
    const client = await a2aClient(t, agentId);
    const result = await client.sendMessage(
      userRequest('call spawn_agent {"agent_name":"researcher","message":"find C"}'),
    );
    if (!("status" in result)) throw new Error("expected a task");
    expect(stateName(result.status?.state)).toBe("COMPLETED");
    expect(partsText(result.artifacts.at(-1)?.parts)).toContain("You said: find C");
    const session = await t.client.beta.sessions.retrieve(result.contextId);
    const environment = await t.client.beta.environments.retrieve(session.environment_id);
    expect(environment).toMatchObject({
      name: "default-eager",
      config: { sandbox: { provisioning: "eager" } },
    });
    expect(await all(t.client.beta.sessions.threads.list(session.id))).toHaveLength(2);
  });

  it("an MCP call's result is the parent's answer made from the child's", async () => {
    const c = await connectMcp(t.server.url);
    try {
      const { tools } = await c.client.listTools();
      const tool = tools.find((x) => x.name.endsWith(`_${agentId.replace(/^agent_/, "")}`));
      const result = (await c.client.callTool({
        name: tool!.name,
        arguments: { message: 'call spawn_agent {"agent_name":"researcher","message":"find D"}' },
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const text = result.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      expect(text).toContain("You said: find D");
      const { session_id: sessionId } = result.structuredContent as { session_id: string };
      expect(await all(t.client.beta.sessions.threads.list(sessionId))).toHaveLength(2);
    } finally {
      await c.close();
    }
  });
});
