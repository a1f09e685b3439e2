/**
 * Agent allow-lists on runtime keys, through each protocol's official client over real HTTP: a key
 * limited to some agents starts and reaches only their sessions; another agent, and a session of
 * another agent, is answered as not found on every edge (Managed, AI SDK, AG-UI, A2A, MCP), and the
 * MCP edge lists only the allowed agents as tools.
 */
import Anthropic, { NotFoundError } from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aClientAt, userRequest } from "../support/a2aClient.js";
import { agUiAgent, recordRun, say } from "../support/agUiAgent.js";
import { aiSdkChat } from "../support/aiSdkChat.js";
import { connectMcp } from "../support/mcpClient.js";
import { isEndTurnIdle, MODEL, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
let allowed: string;
let other: string;
let environmentId: string;
let limitedKey: string;
let limitedKeyId: string;
let otherSession: string;

beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50 });
  allowed = (await t.client.beta.agents.create({ name: "allowed", model: MODEL })).id;
  other = (await t.client.beta.agents.create({ name: "other", model: MODEL })).id;
  environmentId = (await t.client.beta.environments.create({ name: "allow-lists" })).id;
  otherSession = (await t.client.beta.sessions.create({ agent: other, environment_id: environmentId })).id;
  const created = await admin("POST", "/v1/awaken/api_keys", {
    role: "runtime",
    agent_ids: [allowed],
    label: "widget",
  });
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  expect(created.json).toMatchObject({ role: "runtime", agent_ids: [allowed] });
  limitedKey = created.json.key as string;
  limitedKeyId = created.json.id as string;
});
afterAll(() => t.close());

async function admin(method: string, path: string, body?: unknown, key = TEST_API_KEY) {
  const response = await fetch(`${t.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const clientOf = (key: string) => new Anthropic({ apiKey: key, baseURL: t.server.url, maxRetries: 0 });

describe("agent allow-lists", () => {
  it("Managed: the key runs sessions of its agents; another agent and its sessions are not found", async () => {
    const limited = clientOf(limitedKey);
    const session = await limited.beta.sessions.create({ agent: allowed, environment_id: environmentId });
    await limited.beta.sessions.events.send(session.id, { events: [userMessage("hello")] });
    await waitForHistory(limited, session.id, (h) => h.some(isEndTurnIdle), 15_000);

    const refused = await limited.beta.sessions
      .create({ agent: other, environment_id: environmentId })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotFoundError);
    expect((refused as NotFoundError).message).toContain("was not found in this workspace");
    await expect(limited.beta.sessions.retrieve(otherSession)).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      limited.beta.sessions.events.send(otherSession, { events: [userMessage("let me in")] }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(limited.beta.sessions.events.list(otherSession)).rejects.toBeInstanceOf(NotFoundError);
    await expect(limited.beta.sessions.archive(otherSession)).rejects.toBeInstanceOf(NotFoundError);
    // The list holds only sessions of its agents, even when asked for another agent's.
    const listed = await limited.beta.sessions.list({ limit: 100 });
    expect(listed.data.map((s) => s.agent.id)).toEqual([allowed]);
    expect((await limited.beta.sessions.list({ agent_id: other })).data).toEqual([]);
    // Nothing was written to the other agent's session.
    const events = await t.client.beta.sessions.events.list(otherSession);
    expect(events.data.filter((e) => e.type === "user.message")).toEqual([]);
  });

  it("AI SDK: a chat of its agent streams; a chat with another agent, or another agent's session, is refused", async () => {
    const ok = aiSdkChat({ baseUrl: t.server.url, apiKey: limitedKey, body: { agentId: allowed } });
    await ok.chat.sendMessage({ text: "hi from the widget" });
    await ok.waitForFinishes(1);
    expect(ok.errors).toEqual([]);
    expect(ok.sessionId()).toMatch(/^sesn_/);

    const post = (body: unknown) =>
      fetch(`${t.server.url}/v1/ai-sdk/chat`, {
        method: "POST",
        headers: { "x-api-key": limitedKey, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const message = { id: "m1", role: "user", parts: [{ type: "text", text: "hello" }] };
    const toOther = await post({
      id: "chat-other-agent",
      trigger: "submit-message",
      messages: [message],
      agentId: other,
    });
    expect(toOther.status, await toOther.clone().text()).toBe(404);
    const toOtherSession = await post({
      id: otherSession,
      trigger: "submit-message",
      messages: [message],
      agentId: allowed,
    });
    expect(toOtherSession.status).toBe(404);
    const history = await fetch(`${t.server.url}/v1/ai-sdk/threads/${otherSession}/messages`, {
      headers: { "x-api-key": limitedKey },
    });
    expect(history.status).toBe(404);
  });

  it("AG-UI: runs its agent; another agent is a 404 before the stream, another agent's thread a RUN_ERROR", async () => {
    const agent = agUiAgent(t, allowed, undefined, { headers: { "x-api-key": limitedKey } });
    say(agent, "hello over AG-UI");
    const run = await recordRun(agent);
    expect(run.types.at(-1)).toBe("RUN_FINISHED");

    const refused = await fetch(`${t.server.url}/v1/ag-ui/agents/${other}`, {
      method: "POST",
      headers: { "x-api-key": limitedKey, "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        threadId: "t-1",
        runId: "r-1",
        messages: [{ id: "m1", role: "user", content: "hi" }],
        tools: [],
        context: [],
        state: {},
        forwardedProps: {},
      }),
    });
    expect(refused.status, await refused.clone().text()).toBe(404);
    // The other agent's session, named as a thread of the allowed agent.
    const intruder = agUiAgent(t, allowed, otherSession, { headers: { "x-api-key": limitedKey } });
    say(intruder, "let me in");
    const intruded = await recordRun(intruder);
    expect(intruded.types.at(-1)).toBe("RUN_ERROR");
    const events = await t.client.beta.sessions.events.list(otherSession);
    expect(events.data.filter((e) => e.type === "user.message")).toEqual([]);
  });

  it("A2A: its agent answers; another agent's card and interface are not found", async () => {
    const client = await a2aClientAt(t.server.url, allowed, "JSONRPC", limitedKey);
    const result = await client.sendMessage(userRequest("hello over A2A"));
    expect("status" in result && result.contextId).toMatch(/^sesn_/);
    const card = await fetch(`${t.server.url}/v1/a2a/agents/${other}/.well-known/agent-card.json`, {
      headers: { authorization: `Bearer ${limitedKey}` },
    });
    expect(card.status).toBe(404);
    await expect(a2aClientAt(t.server.url, other, "JSONRPC", limitedKey)).rejects.toThrow();
  });

  it("MCP: lists only its agents as tools; another agent's session is refused", async () => {
    const mcp = await connectMcp(t.server.url, { apiKey: limitedKey });
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools).toHaveLength(1);
      const name = tools[0]!.name;
      expect(name.endsWith(allowed.replace(/^agent_/, ""))).toBe(true);
      const answer = await mcp.client.callTool({ name, arguments: { message: "hello over MCP" } });
      expect(answer.isError).toBeFalsy();
      const intruded = await mcp.client.callTool({
        name,
        arguments: { message: "let me in", session_id: otherSession },
      });
      expect(intruded.isError).toBe(true);
      const full = await connectMcp(t.server.url);
      try {
        const all = (await full.client.listTools()).tools.map((x) => x.name);
        expect(all.length).toBeGreaterThanOrEqual(2);
        const otherTool = all.find((x) => x.endsWith(other.replace(/^agent_/, "")))!;
        await expect(mcp.client.callTool({ name: otherTool, arguments: { message: "hi" } })).rejects.toThrow(
          /Unknown tool/,
        );
        // The full key's MCP session is not the limited key's to use.
        const sessionId = full.transport.sessionId!;
        const borrowed = await fetch(`${t.server.url}/v1/mcp`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${limitedKey}`,
            "mcp-session-id": sessionId,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
        });
        expect(borrowed.status).toBe(404);
      } finally {
        await full.close();
      }
    } finally {
      await mcp.close();
    }
    const events = await t.client.beta.sessions.events.list(otherSession);
    expect(events.data.filter((e) => e.type === "user.message")).toEqual([]);
  });

  it("an allow-list is a runtime key's, names agents, and shows in the listing", async () => {
    for (const body of [
      { role: "builder", agent_ids: [allowed] },
      { role: "runtime", agent_ids: [] },
      { role: "runtime", agent_ids: ["bad id"] },
      { role: "runtime", agent_ids: "agent_x" },
    ]) {
      const answer = await admin("POST", "/v1/awaken/api_keys", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    const listed = (await admin("GET", "/v1/awaken/api_keys?limit=1000")).json as {
      data: Array<{ id: string; agent_ids: string[] | null; key?: string }>;
    };
    expect(listed.data.find((k) => k.id === limitedKeyId)).toMatchObject({ agent_ids: [allowed] });
    expect(JSON.stringify(listed)).not.toContain(limitedKey);
    await expect(
      clientOf(limitedKey).beta.sessions.create({ agent: "bad id", environment_id: environmentId }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});
