/**
 * The MCP edge judged by the official MCP SDK client over Streamable HTTP against the real server
 * and a scripted model: the agents as tools, a call as a turn (new or continued session), progress,
 * cancel as interrupt, approvals as elicitation (and, without it, as a pending result another
 * edge answers), client tools, and refusals. Outcomes are checked in the committed history read
 * over the Managed wire.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { connectMcp, type McpTestClient } from "../support/mcpClient.js";
import {
  history,
  isEndTurnIdle,
  MODEL,
  textOf,
  WEATHER_TOOL,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;
const clients: McpTestClient[] = [];
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    // The tool list is re-checked on the keep-alive cadence.
    ssePingMs: 100,
    allowWeakerTiers: true,
  });
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "done" });
});

async function mcp(options: Parameters<typeof connectMcp>[1] = {}): Promise<McpTestClient> {
  const c = await connectMcp(t.server.url, options);
  clients.push(c);
  return c;
}

async function agent(name: string, tools: unknown[] = [], description?: string) {
  return t.client.beta.agents.create({
    name,
    model: MODEL,
    tools: tools as never,
    ...(description ? { description } : {}),
  });
}

/** An agent whose bash asks (or is allowed), running on a tier-"none" environment by default. */
async function bashAgent(policy: "always_ask" | "always_allow") {
  return agent(`bash ${policy}`, [
    { type: "agent_toolset_20260401", configs: [{ name: "bash", permission_policy: { type: policy } }] },
  ]);
}

async function toolNameOf(c: McpTestClient, agentId: string): Promise<string> {
  const { tools } = await c.client.listTools();
  const suffix = agentId.replace(/^agent_/, "");
  const tool = tools.find((x) => x.name.endsWith(`_${suffix}`));
  if (!tool) throw new Error(`no tool for ${agentId}: ${tools.map((x) => x.name).join(", ")}`);
  return tool.name;
}

const structured = (result: unknown) =>
  (result as CallToolResult).structuredContent as {
    session_id: string;
    stop_reason: string;
    pending?: Array<{ call_id: string; kind: string; tool: string; input: unknown }>;
  };
const resultText = (result: unknown) =>
  ((result as CallToolResult).content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("");
const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);

describe("authentication", () => {
  it("no key is a 401 with WWW-Authenticate, and a JSON-RPC error body", async () => {
    const response = await fetch(`${t.server.url}/v1/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer /);
    const body = (await response.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.message).toContain("API key");
  });

  it("the official client with a wrong key fails to connect", async () => {
    await expect(connectMcp(t.server.url, { apiKey: "sk-wrong" })).rejects.toMatchObject({ code: 401 });
  });

  it("an unknown session id, or one the client ended with DELETE, is the spec's 404", async () => {
    const ended = await connectMcp(t.server.url);
    const endedId = ended.transport.sessionId!;
    await ended.close();
    for (const id of ["not-a-session", endedId]) {
      const response = await fetch(`${t.server.url}/v1/mcp`, {
        method: "POST",
        headers: {
          authorization: "Bearer sk-awaken-test-key",
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": id,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32001);
    }
  });

  it("a body that is not JSON is a JSON-RPC parse error, not a 500", async () => {
    const response = await fetch(`${t.server.url}/v1/mcp`, {
      method: "POST",
      headers: {
        authorization: "Bearer sk-awaken-test-key",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: "{nope",
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32700);
  });
});

describe("tools/list", () => {
  it("one tool per active agent, with a stable valid name, its description and the input schema", async () => {
    const a = await agent("Research Helper!", [], "Finds things out.");
    const b = await agent("Research Helper!");
    const c = await mcp();
    const first = await c.client.listTools();
    const names = first.tools.map((x) => x.name);
    const nameA = await toolNameOf(c, a.id);
    const nameB = await toolNameOf(c, b.id);
    expect(nameA).not.toBe(nameB);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    expect(new Set(names).size).toBe(names.length);
    const toolA = first.tools.find((x) => x.name === nameA)!;
    expect(nameA.startsWith("research_helper_")).toBe(true);
    expect(toolA.description).toBe("Finds things out.");
    expect(toolA.inputSchema).toMatchObject({
      type: "object",
      properties: { message: { type: "string" }, session_id: { type: "string" } },
      required: ["message"],
    });
    // Another MCP session (a restarted client) sees the same names.
    const again = await mcp();
    expect((await again.client.listTools()).tools.map((x) => x.name)).toEqual(names);

    await t.client.beta.agents.archive(b.id);
    expect((await c.client.listTools()).tools.map((x) => x.name)).not.toContain(nameB);
  });

  it("creating an agent pushes notifications/tools/list_changed on the client's stream", async () => {
    const c = await mcp();
    await c.client.listTools();
    const changed = c.nextListChanged();
    const created = await agent("newcomer");
    await changed;
    expect((await c.client.listTools()).tools.map((x) => x.name)).toContain(await toolNameOf(c, created.id));
  });
});

describe("tools/call runs one turn", () => {
  it("answers the final text with the session id and stop reason", async () => {
    const a = await agent("caller");
    const c = await mcp();
    fake.enqueue({ kind: "text", text: "Hello over MCP." });
    const result = await c.client.callTool({ name: await toolNameOf(c, a.id), arguments: { message: "hi" } });
    expect(result.isError).toBeFalsy();
    expect(resultText(result)).toBe("Hello over MCP.");
    const { session_id: sessionId, stop_reason } = structured(result);
    expect(stop_reason).toBe("end_turn");
    const events = await history(t.client, sessionId);
    expect(textOf(ofType(events, "user.message")[0])).toBe("hi");
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("Hello over MCP.");
    expect((await t.client.beta.sessions.retrieve(sessionId)).agent.id).toBe(a.id);
  });

  it("continues a session named by session_id", async () => {
    const a = await agent("continuer");
    const c = await mcp();
    const name = await toolNameOf(c, a.id);
    fake.enqueue({ kind: "text", text: "first" }, { kind: "text", text: "second" });
    const first = await c.client.callTool({ name, arguments: { message: "one" } });
    const sessionId = structured(first).session_id;
    const second = await c.client.callTool({ name, arguments: { message: "two", session_id: sessionId } });
    expect(resultText(second)).toBe("second");
    expect(structured(second).session_id).toBe(sessionId);
    const events = await history(t.client, sessionId);
    expect(ofType(events, "user.message").map(textOf)).toEqual(["one", "two"]);
  });

  it("sends progress notifications when the client gave a progress token", async () => {
    const a = await bashAgent("always_allow");
    const c = await mcp();
    fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo progress" } },
      { kind: "text", text: "ran it" },
    );
    const seen: Array<{ progress: number; message?: string }> = [];
    const result = await c.client.callTool(
      { name: await toolNameOf(c, a.id), arguments: { message: "run bash" } },
      undefined,
      { onprogress: (p) => seen.push(p) },
    );
    expect(resultText(result)).toBe("ran it");
    expect(seen.length).toBeGreaterThanOrEqual(3);
    expect(seen.map((p) => p.progress)).toEqual([...seen.map((p) => p.progress)].sort((x, y) => x - y));
    expect(seen[0]?.message).toContain(structured(result).session_id);
    expect(seen.map((p) => p.message)).toContain("Calling bash.");
    expect(seen.map((p) => p.message)).toContain("The agent is writing.");
    expect((result.structuredContent as { tool_calls: unknown }).tool_calls).toMatchObject([
      { name: "bash", state: "done" },
    ]);
  });

  it("a cancelled call (AbortSignal → notifications/cancelled) interrupts the run", async () => {
    const a = await agent("slow");
    const c = await mcp();
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    fake.enqueue({ kind: "text", text: words, chunkDelayMs: 30 });
    const controller = new AbortController();
    let sessionId = "";
    const call = c.client.callTool(
      { name: await toolNameOf(c, a.id), arguments: { message: "tell me a long story" } },
      undefined,
      {
        signal: controller.signal,
        onprogress: (p) => {
          sessionId ||= /sesn_[0-9a-z]+/.exec(p.message ?? "")?.[0] ?? "";
          // Cancelled once the reply streams: the model request is under way.
          if (p.message === "The agent is writing.") controller.abort("changed my mind");
        },
      },
    );
    await expect(call).rejects.toThrow();
    expect(sessionId).not.toBe("");
    const events = await waitForHistory(t.client, sessionId, (h) => h.some(isEndTurnIdle));
    expect(ofType(events, "user.interrupt")).toHaveLength(1);
    expect(ofType(events, "agent.message")).toEqual([]);
  });

  it("refuses bad input as a tool error and writes nothing", async () => {
    const a = await agent("strict");
    const c = await mcp();
    const name = await toolNameOf(c, a.id);
    const before = (await t.client.beta.sessions.list({ agent_id: a.id } as never)).data.length;
    for (const args of [
      {},
      { message: 3 },
      { message: "x", session_id: "sesn_nope" },
      { message: "x", extra: 1 },
    ]) {
      const result = await c.client.callTool({ name, arguments: args as never });
      expect(result.isError, JSON.stringify(args)).toBe(true);
    }
    expect((await t.client.beta.sessions.list({ agent_id: a.id } as never)).data).toHaveLength(before);
    await expect(c.client.callTool({ name: "no_such_agent", arguments: { message: "x" } })).rejects.toThrow(
      /Unknown tool/,
    );
  });

  it("refuses a session of another agent", async () => {
    const a = await agent("owner");
    const b = await agent("other");
    const c = await mcp();
    const first = await c.client.callTool({ name: await toolNameOf(c, a.id), arguments: { message: "hi" } });
    const result = await c.client.callTool({
      name: await toolNameOf(c, b.id),
      arguments: { message: "hi", session_id: structured(first).session_id },
    });
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain(a.id);
  });

  it("a client tool in the turn ends the call naming the call the session awaits", async () => {
    const a = await agent("weather", [WEATHER_TOOL]);
    const c = await mcp();
    fake.enqueue({ kind: "tool_use", name: WEATHER_TOOL.name, input: { city: "Oslo" } });
    const result = await c.client.callTool({
      name: await toolNameOf(c, a.id),
      arguments: { message: "weather?" },
    });
    const s = structured(result);
    expect(s.stop_reason).toBe("requires_action");
    expect(s.pending).toMatchObject([
      { kind: "tool_result", tool: WEATHER_TOOL.name, input: { city: "Oslo" } },
    ]);
    expect(resultText(result)).toContain(s.session_id);
  });
});

describe("approvals", () => {
  it("with elicitation, allow runs the tool and the call answers the turn's end", async () => {
    const a = await bashAgent("always_ask");
    const asked: Array<{ message: string }> = [];
    const c = await mcp({
      elicit: async (request) => {
        asked.push({ message: request.params.message });
        return { action: "accept", content: { decision: "allow" } };
      },
    });
    fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo elicited-allow" } },
      { kind: "text", text: "allowed and ran" },
    );
    const result = await c.client.callTool({ name: await toolNameOf(c, a.id), arguments: { message: "go" } });
    expect(resultText(result)).toBe("allowed and ran");
    expect(asked).toHaveLength(1);
    expect(asked[0]?.message).toContain("bash");
    expect(asked[0]?.message).toContain("echo elicited-allow");
    const events = await history(t.client, structured(result).session_id);
    const use = ofType(events, "agent.tool_use")[0]!;
    expect(ofType(events, "user.tool_confirmation")).toMatchObject([
      { tool_use_id: use.id, result: "allow" },
    ]);
    const ran = ofType(events, "agent.tool_result")[0];
    expect(ran).toMatchObject({ tool_use_id: use.id, is_error: false });
    expect(textOf(ran)).toContain("elicited-allow");
  });

  it("with elicitation, deny never runs the tool and the model hears the reason", async () => {
    const a = await bashAgent("always_ask");
    const c = await mcp({
      elicit: async () => ({ action: "accept", content: { decision: "deny", reason: "not on my machine" } }),
    });
    fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo never" } },
      { kind: "text", text: "ok, I will not" },
    );
    const result = await c.client.callTool({ name: await toolNameOf(c, a.id), arguments: { message: "go" } });
    expect(resultText(result)).toBe("ok, I will not");
    const events = await history(t.client, structured(result).session_id);
    expect(ofType(events, "user.tool_confirmation")).toMatchObject([
      { result: "deny", deny_message: "not on my machine" },
    ]);
    const denied = ofType(events, "agent.tool_result")[0];
    expect(denied).toMatchObject({ is_error: true });
    expect(textOf(denied)).not.toContain("never\n");
  });

  it("without elicitation the call says the approval is pending; the Managed wire answers it", async () => {
    const a = await bashAgent("always_ask");
    const c = await mcp();
    fake.enqueue(
      { kind: "tool_use", name: "bash", input: { command: "echo answered-elsewhere" } },
      { kind: "text", text: "finished after approval" },
    );
    const result = await c.client.callTool({ name: await toolNameOf(c, a.id), arguments: { message: "go" } });
    expect(result.isError).toBeFalsy();
    const s = structured(result);
    expect(s.stop_reason).toBe("requires_action");
    expect(s.pending).toMatchObject([{ kind: "tool_confirmation", tool: "bash" }]);
    expect(resultText(result)).toContain("Approval pending");
    expect(resultText(result)).toContain(s.session_id);

    const callId = s.pending![0]!.call_id;
    await t.client.beta.sessions.events.send(s.session_id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: callId, result: "allow" }],
    });
    const events = await waitForHistory(t.client, s.session_id, (h) => h.some(isEndTurnIdle));
    expect(textOf(ofType(events, "agent.tool_result")[0])).toContain("answered-elsewhere");
    expect(textOf(ofType(events, "agent.message").at(-1))).toBe("finished after approval");
  });
});
