/**
 * A subagent's permission ask as the AI SDK chat sees it (`ai` 6 and 7): the child's `always_ask`
 * bash call is cross-posted on the session's stream, so the chat's turn pauses on a
 * `tool-approval-request` for it; the client's approval, sent on the same assistant message
 * without naming any thread, is routed to the child, which runs the call and answers its parent,
 * and the parent's answer continues the same message.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aiSdkChat, partsOf } from "../support/aiSdkChat.js";
import { AI_SDK_CLIENTS } from "../support/aiSdkClients.js";
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
