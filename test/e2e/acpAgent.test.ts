/**
 * `awaken acp`: the built CLI run as an editor runs it (a child process on stdio), driven by the ACP
 * SDK's client side against the real all-in-one server and a scripted model on the provider's real
 * streaming wire. Each ACP session is an ordinary session: what the editor was shown is what the
 * official Managed Agents client reads. Permission questions are answered allow, reject and
 * cancelled; a cancel interrupts a long turn; a second process replays the history; bad input is a
 * JSON-RPC error and the process stays up; the API key never appears on stdout or stderr.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type ClientContext, methods, PROTOCOL_VERSION, type RequestError } from "@agentclientprotocol/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AcpAgentProcess, chunkText, startAcpAgent } from "../support/acpAgentProcess.js";
import { runAwaken } from "../support/awakenCli.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { history, MODEL, sleep, textOf, type WireEvent, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;
let agentId: string;
let environmentId: string;
let editor: AcpAgentProcess;
let acp: ClientContext;
const processes: AcpAgentProcess[] = [];
/** Each test may start a CLI process: its start-up alone takes seconds on a busy machine. */
const SPAWN_MS = 120_000;

function start(args: string[], raw = false): AcpAgentProcess {
  const p = startAcpAgent(["--url", t.server.url, ...args], { AWAKEN_API_KEY: TEST_API_KEY }, { raw });
  processes.push(p);
  return p;
}

beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url },
    workerPollMs: 50,
    // The environment runs tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
  });
  fake.setFallback({ kind: "text", text: "done" });
  const agent = await t.client.beta.agents.create({
    name: "editor agent",
    model: MODEL,
    tools: [
      {
        type: "agent_toolset_20260401",
        configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
      },
    ] as never,
  });
  agentId = agent.id;
  const environment = await t.client.beta.environments.create({
    name: "editor",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  environmentId = environment.id;
  editor = start(["--agent", agentId, "--environment", environmentId]);
  acp = editor.connection!.agent;
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await t?.close();
  await fake?.close();
});

const workspace = (sessionId: string) => join(t.dataDir, "workspaces", sessionId);
const ofType = (events: WireEvent[], type: string) => events.filter((e) => e.type === type);
const updatesOf = (p: AcpAgentProcess, sessionId: string) =>
  p.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);

async function newSession(): Promise<string> {
  const { sessionId } = await acp.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
  return sessionId;
}

const prompt = (sessionId: string, text: string) =>
  acp.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });

async function failure(promise: Promise<unknown>): Promise<RequestError> {
  try {
    await promise;
  } catch (error) {
    return error as RequestError;
  }
  throw new Error("expected a JSON-RPC error");
}

let textSession: string;
let toolSession: string;

describe("an editor's conversation", { timeout: SPAWN_MS }, () => {
  it("initialize names the agent and its capabilities", async () => {
    const init = await acp.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(init.agentCapabilities).toMatchObject({ loadSession: true });
    expect(init.agentInfo).toMatchObject({ name: "awaken" });
    expect(init.authMethods).toEqual([]);
  });

  it("session/new makes an ordinary session; a prompt streams the turn and ends end_turn", async () => {
    textSession = await newSession();
    expect(textSession).toMatch(/^sesn_/);
    const session = await t.client.beta.sessions.retrieve(textSession);
    expect(session.agent.id).toBe(agentId);
    expect(session.environment_id).toBe(environmentId);

    fake.enqueue({
      kind: "text",
      text: "Hello from the agent, streamed in pieces.",
      thinking: "Let me think.",
    });
    const answer = await prompt(textSession, "hi there");
    expect(answer.stopReason).toBe("end_turn");
    expect(chunkText(editor.updates, textSession, "agent_message_chunk")).toBe(
      "Hello from the agent, streamed in pieces.",
    );
    expect(chunkText(editor.updates, textSession, "agent_thought_chunk")).toBe("Let me think.");
    // The editor shows its own prompt: the turn does not echo it back.
    expect(chunkText(editor.updates, textSession, "user_message_chunk")).toBe("");
    // What the model was sent is the prompt.
    expect(JSON.stringify(fake.requests.at(-1)?.body.messages)).toContain("hi there");
  });

  it("a tool call the policy asks about is the editor's question: allow runs it", async () => {
    toolSession = await newSession();
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo approved > proof.txt" } });
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "allow" } });
    const answer = await prompt(toolSession, "make the proof");
    expect(answer.stopReason).toBe("end_turn");

    const question = editor.asked.at(-1)!;
    expect(question.sessionId).toBe(toolSession);
    expect(question.toolCall.title).toContain("echo approved > proof.txt");
    expect(question.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"]);
    expect(existsSync(join(workspace(toolSession), "proof.txt"))).toBe(true);

    const updates = updatesOf(editor, toolSession);
    const call = updates.find((u) => u.sessionUpdate === "tool_call");
    expect(call).toMatchObject({
      toolCallId: question.toolCall.toolCallId,
      kind: "execute",
      status: "pending",
    });
    expect(updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => u.status)).toEqual([
      "in_progress",
      "completed",
    ]);
    expect(chunkText(editor.updates, toolSession, "agent_message_chunk")).toBe("done");

    const events = await history(t.client, toolSession);
    expect(ofType(events, "user.tool_confirmation")).toMatchObject([
      { tool_use_id: question.toolCall.toolCallId, result: "allow" },
    ]);
  });

  it("reject denies the call: it never runs and the turn goes on", async () => {
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo nope > denied.txt" } });
    editor.answer = async () => ({ outcome: { outcome: "selected", optionId: "reject" } });
    const before = editor.updates.length;
    const answer = await prompt(toolSession, "try again");
    expect(answer.stopReason).toBe("end_turn");
    expect(existsSync(join(workspace(toolSession), "denied.txt"))).toBe(false);

    const question = editor.asked.at(-1)!;
    const updates = editor.updates.slice(before).map((n) => n.update);
    expect(updates.find((u) => u.sessionUpdate === "tool_call_update")).toMatchObject({
      toolCallId: question.toolCall.toolCallId,
      status: "failed",
    });
    const events = await history(t.client, toolSession);
    expect(ofType(events, "user.tool_confirmation").at(-1)).toMatchObject({
      tool_use_id: question.toolCall.toolCallId,
      result: "deny",
    });
  });

  it("session/cancel interrupts a long turn: the prompt answers cancelled", async () => {
    const sessionId = await newSession();
    const requests = fake.requests.length;
    fake.enqueue({ kind: "hang" });
    const answer = prompt(sessionId, "take your time");
    await fake.waitForRequests(requests + 1);
    await acp.notify(methods.agent.session.cancel, { sessionId });
    expect((await answer).stopReason).toBe("cancelled");
    const events = await waitForHistory(t.client, sessionId, (h) =>
      h.some((e) => e.type === "session.status_idle"),
    );
    expect(ofType(events, "user.interrupt")).toHaveLength(1);
    expect((await t.client.beta.sessions.retrieve(sessionId)).status).toBe("idle");
    // The session takes the next prompt.
    expect((await prompt(sessionId, "again")).stopReason).toBe("end_turn");
  });

  it("a cancel while the editor is asked: the question is withdrawn, nothing is confirmed", async () => {
    const sessionId = await newSession();
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "echo never > never.txt" } });
    let withdraw!: () => void;
    const withdrawn = new Promise<void>((resolve) => {
      withdraw = resolve;
    });
    const asked = new Promise<void>((resolve) => {
      editor.answer = async () => {
        resolve();
        await withdrawn;
        return { outcome: { outcome: "cancelled" } };
      };
    });
    const answer = prompt(sessionId, "do it");
    await asked;
    await acp.notify(methods.agent.session.cancel, { sessionId });
    withdraw();
    expect((await answer).stopReason).toBe("cancelled");
    const events = await history(t.client, sessionId);
    expect(ofType(events, "user.tool_confirmation")).toEqual([]);
    expect(ofType(events, "user.interrupt")).toHaveLength(1);
    expect(existsSync(join(workspace(sessionId), "never.txt"))).toBe(false);
  });
});

describe("the same sessions over other clients", { timeout: SPAWN_MS }, () => {
  it("session/load in another process replays the committed history", async () => {
    const other = start(["--agent", agentId]);
    const again = other.connection!.agent;
    await again.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION });
    await again.request(methods.agent.session.load, { sessionId: toolSession, cwd: "/tmp", mcpServers: [] });

    const replayed = updatesOf(other, toolSession);
    expect(chunkText(other.updates, toolSession, "user_message_chunk")).toBe("make the prooftry again");
    expect(chunkText(other.updates, toolSession, "agent_message_chunk")).toBe("donedone");
    const calls = replayed.filter((u) => u.sessionUpdate === "tool_call");
    expect(calls.map((c) => c.title)).toEqual([
      "bash: echo approved > proof.txt",
      "bash: echo nope > denied.txt",
    ]);
    expect(replayed.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => u.status)).toEqual([
      "completed",
      "failed",
    ]);

    // The loaded session takes prompts in the new process.
    expect(
      (
        await again.request(methods.agent.session.prompt, {
          sessionId: toolSession,
          prompt: [{ type: "text", text: "more" }],
        })
      ).stopReason,
    ).toBe("end_turn");
  });

  it("the official Managed client reads what the editor was shown", async () => {
    const events = await history(t.client, textSession);
    expect(ofType(events, "user.message").map(textOf)).toEqual(["hi there"]);
    expect(ofType(events, "agent.message").map(textOf)).toEqual([
      chunkText(editor.updates, textSession, "agent_message_chunk"),
    ]);
    const tools = await history(t.client, toolSession);
    expect(ofType(tools, "user.message").map(textOf)).toEqual(["make the proof", "try again", "more"]);
    const shown = updatesOf(editor, toolSession).filter((u) => u.sessionUpdate === "tool_call");
    expect(ofType(tools, "agent.tool_use").map((e) => e.id)).toEqual(shown.map((u) => u.toolCallId));
    expect(ofType(tools, "agent.tool_result").map((e) => e.is_error)).toEqual([false, true]);
  });

  it("a session parked on an approval asked elsewhere refuses a prompt until it is answered", async () => {
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environmentId });
    fake.enqueue({ kind: "tool_use", name: "bash", input: { command: "true" } });
    await t.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.message", content: [{ type: "text", text: "over the Managed API" }] }],
    });
    const parked = await waitForHistory(t.client, session.id, (h) =>
      h.some((e) => e.type === "session.status_idle"),
    );
    const useId = ofType(parked, "agent.tool_use")[0]!.id;
    await acp.request(methods.agent.session.load, { sessionId: session.id, cwd: "/tmp", mcpServers: [] });
    const refused = await failure(prompt(session.id, "hello?"));
    expect(refused.code).toBe(-32600);
    expect(refused.message).toContain(useId);
    expect(ofType(await history(t.client, session.id), "user.message")).toHaveLength(1);

    await t.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.tool_confirmation", tool_use_id: useId, result: "allow" }],
    });
    await waitForHistory(t.client, session.id, (h) => ofType(h, "session.status_idle").length === 2);
    expect((await prompt(session.id, "now?")).stopReason).toBe("end_turn");
  });

  it("without --environment a session runs in the workspace's default environment", async () => {
    const other = start(["--agent", agentId]);
    const plain = other.connection!.agent;
    await plain.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION });
    const { sessionId } = await plain.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
    const session = await t.client.beta.sessions.retrieve(sessionId);
    const environment = await t.client.beta.environments.retrieve(session.environment_id);
    expect(environment.name).toBe("default");
    // A second session reuses it.
    const second = await plain.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
    expect((await t.client.beta.sessions.retrieve(second.sessionId)).environment_id).toBe(environment.id);
  });
});

describe("bad input is a JSON-RPC error and the process stays up", { timeout: SPAWN_MS }, () => {
  it("load: a malformed id, an unknown id; prompt: a session this editor never opened", async () => {
    const malformed = await failure(
      acp.request(methods.agent.session.load, { sessionId: "../agents", cwd: "/tmp", mcpServers: [] }),
    );
    expect(malformed.code).toBe(-32602);
    const unknown = await failure(
      acp.request(methods.agent.session.load, {
        sessionId: `sesn_${"0".repeat(26)}`,
        cwd: "/tmp",
        mcpServers: [],
      }),
    );
    expect(unknown.code).toBe(-32002);
    const stranger = await failure(prompt(`sesn_${"1".repeat(26)}`, "hello?"));
    expect(stranger.code).toBe(-32002);
    const empty = await failure(
      acp.request(methods.agent.session.prompt, { sessionId: textSession, prompt: [] }),
    );
    expect(empty.code).toBe(-32602);
    // Still serving.
    expect((await prompt(textSession, "still there?")).stopReason).toBe("end_turn");
  });

  it("malformed lines and requests on the raw wire", async () => {
    const raw = start(["--agent", agentId], true);
    const send = (line: string) => raw.child.stdin.write(`${line}\n`);
    const answerTo = async (id: number) => {
      for (let i = 0; i < 1200; i++) {
        const line = raw
          .stdout()
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as { id?: number; error?: { code: number }; result?: unknown })
          .find((m) => m.id === id);
        if (line) return line;
        await sleep(50);
      }
      throw new Error(`no answer to request ${id}`);
    };
    send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}');
    expect((await answerTo(1)).result).toMatchObject({ protocolVersion: 1 });
    send("{not json");
    send('{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":5}}');
    expect((await answerTo(2)).error?.code).toBe(-32602);
    send('{"jsonrpc":"2.0","id":3,"method":"session/unheard_of","params":{}}');
    expect((await answerTo(3)).error?.code).toBe(-32601);
    send(
      '{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"sesn_x","cwd":"/tmp","mcpServers":[]}}',
    );
    expect((await answerTo(4)).error?.code).toBe(-32602);
    send('{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}');
    expect((await answerTo(5)).result).toMatchObject({ sessionId: expect.stringMatching(/^sesn_/) });
    expect(raw.child.exitCode).toBeNull();
    // The line that was no JSON got the parse error (it has no id to answer by).
    expect(raw.stdout()).toMatch(/"id":null[^\n]*"code":-32700|"code":-32700[^\n]*"id":null/);
    // Every line on stdout is a JSON-RPC message.
    for (const line of raw
      .stdout()
      .split("\n")
      .filter((l) => l.trim() !== "")) {
      expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
    }
  });

  it("--help says where the key comes from; without one the command refuses to start", async () => {
    // Through bin/awaken.js, as an editor starts it (its own entry); the full CLI lists it too.
    const [all, help, keyless] = await Promise.all([
      runAwaken(["--help"]),
      runAwaken(["acp", "--help"]),
      runAwaken(["acp", "--agent", agentId, "--url", t.server.url]),
    ]);
    expect(all.stdout).toMatch(/\n {2}acp \[options\] +Run an agent as an Agent Client Protocol/);
    expect(help.stdout).toContain("AWAKEN_API_KEY");
    expect(help.stdout).toContain("--api-key-file");
    expect(help.stdout).toMatch(/never printed/);
    expect(keyless.code).toBe(1);
    expect(keyless.stdout).toBe("");
    expect(keyless.stderr).toContain("no API key");
  });

  it("no process printed the API key; stdout carried JSON-RPC messages only", () => {
    for (const p of processes) {
      expect(p.stdout()).not.toContain(TEST_API_KEY);
      expect(p.stderr()).not.toContain(TEST_API_KEY);
      // stdout is the protocol's alone.
      for (const line of p
        .stdout()
        .split("\n")
        .filter((l) => l.trim() !== "")) {
        expect(JSON.parse(line)).toMatchObject({ jsonrpc: "2.0" });
      }
    }
  });
});
