/**
 * A subagent's permission ask as the UI protocols' official clients see it. The child's
 * `always_ask` bash call is cross-posted on the session's stream, so the AI SDK chat's turn (`ai` 6
 * and 7) pauses on a `tool-approval-request` for it, and an AG-UI run finishes with an interrupt
 * naming it; the client's approval, sent without naming any thread, is routed to the child, which
 * runs the call and answers its parent, and the parent's answer follows. An MCP client that
 * declares elicitation is asked, an A2A task goes input-required, and their answers take the same
 * route.
 */
import { randomUUID } from "node:crypto";
import { EventType } from "@ag-ui/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aClient, dataPart, partsText, stateName, userRequest } from "../support/a2aClient.js";
import { agUiAgent, recordRun, say } from "../support/agUiAgent.js";
import { aiSdkChat, partsOf } from "../support/aiSdkChat.js";
import { AI_SDK_CLIENTS } from "../support/aiSdkClients.js";
import { connectMcp } from "../support/mcpClient.js";
import { history, MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
let agentId: string;
let environmentId: string;

beforeAll(async () => {
  t = await startTestServer({ allowWeakerTiers: true });
  const researcher = await t.client.beta.agents.create({
    name: "researcher",
    model: MODEL,
    tools: [
      {
        type: "agent_toolset_20260401",
        configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
      },
    ] as never,
  });
  const lead = await t.client.beta.agents.create({
    name: "lead",
    model: MODEL,
    multiagent: {
      type: "multiagent_20261001",
      subagents: { type: "enabled", predefined_agents: [researcher.id] },
    },
  });
  agentId = lead.id;
  const environment = await t.client.beta.environments.create({
    name: "subagent-approvals",
    config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
  });
  environmentId = environment.id;
});
afterAll(async () => {
  await t.close();
});

const SPAWN_ASKING = JSON.stringify({
  agent_name: "researcher",
  message: 'call bash {"command":"echo child-ran"}',
});

describe.each(AI_SDK_CLIENTS)("$label", ({ ai }) => {
  it("a subagent's ask pauses the turn; the approval reaches the subagent and the turn goes on", async () => {
    const h = aiSdkChat({
      ai,
      baseUrl: t.server.url,
      apiKey: TEST_API_KEY,
      id: `chat-${randomUUID()}`,
      body: { agentId, environmentId },
      sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await h.chat.sendMessage({ text: `call spawn_agent ${SPAWN_ASKING}` });
    await h.waitForFinishes(1, 30_000);
    expect(h.errors).toEqual([]);
    expect(h.finishes.at(-1)?.finishReason).toBe("tool-calls");
    const first = h.chat.messages.at(-1);
    const asked = first?.parts.find((p) => p.type === "tool-bash") as
      | { state: string; approval: { id: string }; toolCallId: string; input: unknown }
      | undefined;
    expect(asked).toMatchObject({ state: "approval-requested", input: { command: "echo child-ran" } });

    await h.chat.addToolApprovalResponse({ id: asked!.approval.id, approved: true });
    await h.waitForFinishes(2, 30_000);
    expect(h.errors).toEqual([]);
    const answer = h.chat.messages.at(-1);
    // The same assistant message, continued: the spawn's output, then the parent's answer from it.
    expect(answer?.id).toBe(first?.id);
    const spawn = answer?.parts.find((p) => p.type === "tool-spawn_agent") as {
      state: string;
      output: unknown;
    };
    expect(spawn.state).toBe("output-available");
    expect(JSON.stringify(spawn.output)).toContain("child-ran");
    expect(JSON.stringify(partsOf(answer).at(-1))).toContain("child-ran");

    // The confirmation was committed on the child's thread, by the call's id, once.
    const sessionId = h.sessionId()!;
    const threads = [];
    for await (const thread of t.client.beta.sessions.threads.list(sessionId)) threads.push(thread);
    const child = threads.find((th) => th.parent_thread_id !== null)!;
    const childEvents = [];
    for await (const e of t.client.beta.sessions.threads.events.list(child.id, { session_id: sessionId }))
      childEvents.push(e);
    expect(childEvents.filter((e) => e.type === "user.tool_confirmation")).toMatchObject([
      { tool_use_id: asked!.toolCallId, result: "allow" },
    ]);
    expect((await history(t.client, sessionId)).some((e) => e.type === "user.tool_confirmation")).toBe(false);
  });
});

describe("AG-UI", () => {
  it("a subagent's ask ends the run with an interrupt; resuming it reaches the subagent and the next run answers", async () => {
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    const client = agUiAgent(t, agentId, session.id);
    say(client, `call spawn_agent ${SPAWN_ASKING}`);
    const first = await recordRun(client);
    const outcome = first.finished?.outcome as {
      type: string;
      interrupts: Array<{ id: string; toolCallId: string }>;
    };
    expect(outcome.type).toBe("interrupt");
    expect(outcome.interrupts).toHaveLength(1);
    const bashCall = first.events.find(
      (e) =>
        e.type === EventType.TOOL_CALL_START &&
        (e as unknown as { toolCallName: string }).toolCallName === "bash",
    ) as unknown as { toolCallId: string } | undefined;
    expect(outcome.interrupts[0]?.toolCallId).toBe(bashCall?.toolCallId);

    const second = await recordRun(client, {
      resume: [{ interruptId: outcome.interrupts[0]!.id, status: "resolved", payload: { approved: true } }],
    });
    expect(second.finished?.outcome).toEqual({ type: "success" });
    const spawnResult = second.events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as unknown as {
      content: string;
    };
    expect(spawnResult.content).toContain("child-ran");
    expect(client.pendingInterrupts).toEqual([]);
  });
});

describe("MCP", () => {
  it("a subagent's ask is elicited from the MCP client; its answer reaches the subagent and the call answers", async () => {
    const asked: string[] = [];
    const c = await connectMcp(t.server.url, {
      elicit: async (request) => {
        asked.push(request.params.message);
        return { action: "accept", content: { decision: "allow" } };
      },
    });
    try {
      const { tools } = await c.client.listTools();
      const tool = tools.find((x) => x.name.endsWith(`_${agentId.replace(/^agent_/, "")}`));
      const result = (await c.client.callTool({
        name: tool!.name,
        arguments: { message: `call spawn_agent ${SPAWN_ASKING}` },
      })) as CallToolResult;
      expect(asked).toHaveLength(1);
      expect(asked[0]).toContain("echo child-ran");
      expect(result.isError).toBeFalsy();
      expect(result.content.map((b) => (b.type === "text" ? b.text : "")).join("")).toContain("child-ran");
    } finally {
      await c.close();
    }
  });
});

describe("A2A", () => {
  it("a subagent's ask makes the task input-required; a data part {approved} reaches the subagent", async () => {
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    const client = await a2aClient(t, agentId);
    const first = await client.sendMessage(
      userRequest(`call spawn_agent ${SPAWN_ASKING}`, { contextId: session.id }),
    );
    if (!("status" in first)) throw new Error("expected a task");
    expect(stateName(first.status?.state)).toBe("INPUT_REQUIRED");
    expect(partsText(first.status?.message?.parts)).toContain("bash");
    const allowed = await client.sendMessage(
      userRequest([dataPart({ approved: true })], { taskId: first.id, contextId: session.id }),
    );
    if (!("status" in allowed)) throw new Error("expected a task");
    expect(stateName(allowed.status?.state)).toBe("COMPLETED");
    expect(partsText(allowed.artifacts.at(-1)?.parts)).toContain("child-ran");
  });
});
