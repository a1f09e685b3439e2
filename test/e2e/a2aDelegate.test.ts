/**
 * A remote A2A agent as the Brain, end to end between two real `awaken up` processes: the remote
 * one serves an offline-model agent through its A2A edge; the local one runs an agent whose model
 * is `a2a:<that agent's card URL>`, driven with the official Anthropic SDK. Covers a delegated turn
 * (with its live previews), input-required answered over our Managed wire or left behind by an
 * interrupt, a kill -9 of the local server mid-call and an answer lost before the task id was
 * stored (the remote sees one task either way), remote cancel and our interrupt, and the refusals.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TaskState } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BAD_REQUEST,
  expectApiError,
  history,
  isActionIdle,
  isEndTurnIdle,
  MODEL,
  runTurn,
  StreamReader,
  sleep,
  textOf,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";
import { startTcpProxy } from "../support/tcpProxy.js";

const REMOTE_KEY = "sk-awaken-a2a-remote";
const LOCAL_KEY = "sk-awaken-a2a-local";
/** Per streamed word on the remote's offline model: long enough to kill the local server mid-task. */
const SLOW_DELAY_MS = 250;

let scratch: string;
let remote: ServerProcess;
let local: ServerProcess;

async function startRemote(): Promise<ServerProcess> {
  return startServerProcess({
    dataDir: join(scratch, "remote"),
    apiKey: REMOTE_KEY,
    env: { AWAKEN_OFFLINE_DELAY_MS: String(SLOW_DELAY_MS) },
  });
}

async function startLocal(): Promise<ServerProcess> {
  // The remote listens on the loopback, which only the operator's allow-list lets through.
  return startServerProcess({
    dataDir: join(scratch, "local"),
    apiKey: LOCAL_KEY,
    args: [
      "--lease-ms",
      "1000",
      "--model-retry-base-ms",
      "10",
      "--allow-unsandboxed-tier",
      "--allow-private-mcp-host",
      "127.0.0.1",
    ],
  });
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "awaken-a2a-delegate-"));
  remote = await startRemote();
  local = await startLocal();
}, 60_000);
afterEach(async () => {
  // A test that killed the local server leaves a fresh one behind for the next.
  if (local.child.exitCode !== null || local.child.signalCode !== null) local = await startLocal();
});
afterAll(async () => {
  try {
    for (const p of [local, remote]) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
      p.child.kill("SIGTERM");
      // A server draining a slow remote task gets a few seconds, then is stopped for good.
      const stopped = await Promise.race([p.exited.then(() => true), sleep(5_000).then(() => false)]);
      if (!stopped) {
        p.child.kill("SIGKILL");
        await p.exited;
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}, 30_000);

const cardUrl = (agentId: string) => `${remote.url}/v1/a2a/agents/${agentId}/.well-known/agent-card.json`;

/** The official A2A client on the remote agent, as an operator inspecting it would use it. */
async function remoteA2a(agentId: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("authorization", `Bearer ${REMOTE_KEY}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(cardUrl(agentId), "");
}

async function remoteTasks(agentId: string) {
  const client = await remoteA2a(agentId);
  const listed = await client.listTasks({
    tenant: "",
    contextId: "",
    status: TaskState.TASK_STATE_UNSPECIFIED,
    pageToken: "",
    statusTimestampAfter: undefined,
  });
  return { client, tasks: listed.tasks };
}

/** A remote agent, and a local delegate session whose vault holds the remote's API key. */
async function delegateSession(options: { tools?: unknown[]; url?: string } = {}) {
  const remoteAgent = await remote.client.beta.agents.create({
    name: "remote",
    model: MODEL,
    tools: (options.tools ?? []) as never,
  });
  const url = options.url ?? cardUrl(remoteAgent.id);
  const vault = await local.client.beta.vaults.create({ display_name: "a2a" } as never);
  await local.client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token: REMOTE_KEY, mcp_server_url: url },
  } as never);
  return { remoteAgentId: remoteAgent.id, sessionId: await localSession(url, [vault.id]) };
}

/** A local session of an agent delegating to `url`, on an eager tier-none environment. */
async function localSession(url: string, vaultIds: string[]): Promise<string> {
  const agent = await local.client.beta.agents.create({ name: "delegate", model: `a2a:${url}` });
  const environment = await local.client.beta.environments.create({
    name: "delegate",
    config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } } as never,
  });
  const session = await local.client.beta.sessions.create({
    agent: agent.id,
    environment_id: environment.id,
    vault_ids: vaultIds,
  } as never);
  return session.id;
}

function localRows(query: string, ...params: unknown[]): Array<Record<string, unknown>> {
  const db = new SqliteDatabase(join(scratch, "local", "awaken.db"), { readonly: true });
  try {
    return db.prepare(query).all(...params) as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
}

/** The remote tasks our session committed (`awaken.a2a_task`), from the local store. */
const storedRemoteTasks = (sessionId: string) =>
  localRows("select body_json from events where session_id = ? and type = 'awaken.a2a_task'", sessionId).map(
    (r) => JSON.parse(String(r.body_json)) as { task_id: string; message_id: string },
  );

const stopType = (e: WireEvent) => (e.stop_reason as { type: string } | undefined)?.type;

const agentTexts = (events: WireEvent[]) => events.filter((e) => e.type === "agent.message").map(textOf);

async function waitForRemoteWorking(remoteAgentId: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { tasks } = await remoteTasks(remoteAgentId);
    const working = tasks.find((t) => t.status?.state === TaskState.TASK_STATE_WORKING);
    if (working) return working.id;
    if (Date.now() > deadline) throw new Error("the remote task never started working");
    await sleep(50);
  }
}

describe("an a2a: model delegates each turn to a remote A2A agent", () => {
  it("a turn runs as one remote task; its text is committed as our agent message; the context carries on", async () => {
    const { remoteAgentId, sessionId } = await delegateSession();
    // The remote's streamed artifact chunks are our live previews of the message that is committed.
    const reader = await StreamReader.open(local.client, sessionId, { event_deltas: ["agent.message"] });
    const turn = await runTurn(local.client, reader, sessionId, "hello there");
    await reader.close();
    const message = turn.find((e) => e.type === "agent.message");
    expect(textOf(message)).toBe("[offline model] You said: hello there");
    const deltas = turn.filter((e) => e.type === "event_delta");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.event_id === message?.id)).toBe(true);
    expect(deltas.map((d) => (d.delta as { content: { text: string } }).content.text).join("")).toBe(
      textOf(message),
    );
    let events = await history(local.client, sessionId);
    expect(agentTexts(events)).toEqual(["[offline model] You said: hello there"]);

    await local.client.beta.sessions.events.send(sessionId, { events: [userMessage("and again")] });
    events = await waitForHistory(
      local.client,
      sessionId,
      (h) => h.filter(isEndTurnIdle).length === 2,
      20_000,
    );
    expect(agentTexts(events)).toEqual([
      "[offline model] You said: hello there",
      "[offline model] You said: and again",
    ]);
    const { tasks } = await remoteTasks(remoteAgentId);
    expect(tasks).toHaveLength(2);
    // The pinned credential was opened for the delegate holder once per call, and never written or logged.
    expect(localRows("select holder, outcome from credential_opens where session_id = ?", sessionId)).toEqual(
      [
        { holder: "a2a_delegate", outcome: "opened" },
        { holder: "a2a_delegate", outcome: "opened" },
      ],
    );
    expect(
      localRows("select body_json from events where session_id = ?", sessionId)
        .map((r) => r.body_json)
        .join(""),
    ).not.toContain(REMOTE_KEY);
    expect(local.stdout() + local.stderr()).not.toContain(REMOTE_KEY);
    expect(tasks.every((t) => t.status?.state === TaskState.TASK_STATE_COMPLETED)).toBe(true);
    // One remote context (= one remote session) for our session's turns.
    expect(new Set(tasks.map((t) => t.contextId)).size).toBe(1);
  }, 60_000);

  it("input-required on the remote parks our session; the answer over our Managed wire completes the same remote task", async () => {
    const { remoteAgentId, sessionId } = await delegateSession({ tools: [WEATHER_TOOL] });
    await local.client.beta.sessions.events.send(sessionId, {
      events: [userMessage('call get_weather {"city":"Oslo"}')],
    });
    const parked = await waitForHistory(local.client, sessionId, (h) => h.some(isActionIdle), 20_000);
    const asked = parked.find((e) => e.type === "agent.custom_tool_use");
    if (!asked) throw new Error("the session did not ask for input");
    expect(asked).toMatchObject({ name: "a2a_input_required", input: { state: "input-required" } });
    const remoteTaskId = (asked.input as { task_id: string }).task_id;
    const before = await remoteTasks(remoteAgentId);
    expect(before.tasks.map((t) => [t.id, t.status?.state])).toEqual([
      [remoteTaskId, TaskState.TASK_STATE_INPUT_REQUIRED],
    ]);

    await local.client.beta.sessions.events.send(sessionId, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: asked.id,
          content: [{ type: "text", text: "Sunny, 21C" }],
        },
      ] as never,
    });
    const events = await waitForHistory(local.client, sessionId, (h) => h.some(isEndTurnIdle), 20_000);
    expect(agentTexts(events).join("\n")).toContain("Sunny, 21C");
    // The remote's tool step (its status message while it works) is progress on our side.
    expect(events.filter((e) => e.type === "agent.thinking").length).toBeGreaterThan(0);
    const after = await remoteTasks(remoteAgentId);
    expect(after.tasks.map((t) => [t.id, t.status?.state])).toEqual([
      [remoteTaskId, TaskState.TASK_STATE_COMPLETED],
    ]);
  }, 60_000);

  it("a question left unanswered by an interrupt: the next turn cancels that remote task and opens a new one", async () => {
    const { remoteAgentId, sessionId } = await delegateSession({ tools: [WEATHER_TOOL] });
    await local.client.beta.sessions.events.send(sessionId, {
      events: [userMessage('call get_weather {"city":"Rome"}')],
    });
    await waitForHistory(local.client, sessionId, (h) => h.some(isActionIdle), 20_000);
    await local.client.beta.sessions.events.send(sessionId, {
      events: [{ type: "user.interrupt" }] as never,
    });
    await local.client.beta.sessions.events.send(sessionId, { events: [userMessage("something else")] });
    // The interrupt's own idle is the first end_turn; the new turn's is the second.
    const events = await waitForHistory(
      local.client,
      sessionId,
      (h) => h.filter(isEndTurnIdle).length === 2,
      20_000,
    );
    const { client, tasks } = await remoteTasks(remoteAgentId);
    expect(tasks.map((t) => t.status?.state)).toEqual([
      TaskState.TASK_STATE_COMPLETED,
      TaskState.TASK_STATE_CANCELED,
    ]);
    expect(new Set(tasks.map((t) => t.contextId)).size).toBe(1);
    // Our answer is the new remote task's (the remote model also reads the canceled call's result).
    const latest = await client.getTask({ tenant: "", id: tasks[0]?.id ?? "", historyLength: undefined });
    const answer = latest.artifacts
      .flatMap((a) => a.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")))
      .join("");
    expect(answer).not.toBe("");
    expect(agentTexts(events)).toEqual([answer]);
    const remoteEvents = await history(remote.client, tasks[0]?.contextId ?? "");
    expect(textOf(remoteEvents.filter((e) => e.type === "user.message").at(-1))).toBe("something else");
  }, 60_000);

  it("kill -9 of our server mid-call: the restarted server resumes the stored remote task, never sends twice", async () => {
    const { remoteAgentId, sessionId } = await delegateSession();
    const words = "one two three four five six seven eight nine ten eleven twelve";
    await local.client.beta.sessions.events.send(sessionId, { events: [userMessage(words)] });
    const remoteTaskId = await waitForRemoteWorking(remoteAgentId);
    // The remote task's id is durable on our side before the kill: the restart must resume it.
    const deadline = Date.now() + 10_000;
    while (!storedRemoteTasks(sessionId).some((body) => body.task_id === remoteTaskId)) {
      if (Date.now() > deadline) throw new Error("the remote task id was never committed");
      await sleep(20);
    }
    local.child.kill("SIGKILL");
    await local.exited;
    local = await startLocal();
    const events = await waitForHistory(local.client, sessionId, (h) => h.some(isEndTurnIdle), 30_000);
    expect(agentTexts(events)).toEqual([`[offline model] You said: ${words}`]);
    const { client, tasks } = await remoteTasks(remoteAgentId);
    expect(tasks.map((t) => t.id)).toEqual([remoteTaskId]);
    const task = await client.getTask({ tenant: "", id: remoteTaskId, historyLength: undefined });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // One user message reached the remote session: the resumed call sent nothing.
    const remoteEvents = await history(remote.client, task.contextId);
    expect(remoteEvents.filter((e) => e.type === "user.message")).toHaveLength(1);
    expect(storedRemoteTasks(sessionId)).toHaveLength(1);
  }, 90_000);

  it("a send whose answer was lost before the task id was stored is sent again with the same message id: one remote task", async () => {
    const remoteAgent = await remote.client.beta.agents.create({ name: "remote", model: MODEL });
    // Between us and the remote: the first streaming send reaches it, its answer never reaches us.
    const proxy = await startTcpProxy(remote.url);
    try {
      let dropped = false;
      proxy.setDecider((request) => {
        if (dropped || !request.body.includes("SendStreamingMessage")) return "forward";
        dropped = true;
        return "drop_response";
      });
      const url = `${proxy.url}/v1/a2a/agents/${remoteAgent.id}/.well-known/agent-card.json`;
      const { sessionId } = await delegateSession({ url });
      await local.client.beta.sessions.events.send(sessionId, {
        events: [userMessage("lost on the way back")],
      });
      const events = await waitForHistory(local.client, sessionId, (h) => h.some(isEndTurnIdle), 30_000);
      expect(agentTexts(events)).toEqual(["[offline model] You said: lost on the way back"]);
      const sends = proxy.requests.filter((r) => r.body.includes("SendStreamingMessage"));
      expect(sends.map((r) => r.fate)).toEqual(["drop_response", "forward"]);
      const messageIds = sends.map((r) => JSON.parse(r.body).params.message.messageId);
      expect(messageIds[0]).toBe(messageIds[1]);
      const { tasks } = await remoteTasks(remoteAgent.id);
      expect(tasks).toHaveLength(1);
      const remoteEvents = await history(remote.client, tasks[0]!.contextId);
      expect(remoteEvents.filter((e) => e.type === "user.message")).toHaveLength(1);
      // The lost attempt was a transient failure, retried; nothing else went wrong.
      expect(
        events.filter((e) => e.type === "session.error").map((e) => (e.error as { type: string }).type),
      ).toEqual(["model_request_failed_error"]);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it("our interrupt cancels the remote task; a remote task canceled there ends our turn with an error", async () => {
    const first = await delegateSession();
    await local.client.beta.sessions.events.send(first.sessionId, {
      events: [userMessage("a long answer that the user interrupts before it is done")],
    });
    const interrupted = await waitForRemoteWorking(first.remoteAgentId);
    await local.client.beta.sessions.events.send(first.sessionId, {
      events: [{ type: "user.interrupt" }] as never,
    });
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { tasks } = await remoteTasks(first.remoteAgentId);
      if (tasks.find((t) => t.id === interrupted)?.status?.state === TaskState.TASK_STATE_CANCELED) break;
      if (Date.now() > deadline) throw new Error("the remote task was never canceled");
      await sleep(50);
    }

    const second = await delegateSession();
    await local.client.beta.sessions.events.send(second.sessionId, {
      events: [userMessage("a long answer that the remote operator cancels")],
    });
    const canceled = await waitForRemoteWorking(second.remoteAgentId);
    const { client } = await remoteTasks(second.remoteAgentId);
    await client.cancelTask({ tenant: "", id: canceled, metadata: undefined });
    const events = await waitForHistory(
      local.client,
      second.sessionId,
      (h) =>
        h.some(
          (e) =>
            e.type === "session.status_idle" &&
            (e.stop_reason as { type: string }).type === "retries_exhausted",
        ),
      20_000,
    );
    const error = events.find((e) => e.type === "session.error");
    expect(JSON.stringify(error)).toContain("a2a_task_failed_error");
    expect(JSON.stringify(error)).toContain("ended canceled");
    expect(agentTexts(events)).toEqual([]);
  }, 60_000);

  it("a remote that cannot be used ends the turn with a clear error: no credential, a forbidden address", async () => {
    const remoteAgent = await remote.client.beta.agents.create({ name: "remote", model: MODEL });
    const failedTurn = async (url: string) => {
      const sessionId = await localSession(url, []);
      await local.client.beta.sessions.events.send(sessionId, { events: [userMessage("hello")] });
      const events = await waitForHistory(
        local.client,
        sessionId,
        (h) => h.some((e) => e.type === "session.status_idle" && stopType(e) === "retries_exhausted"),
        20_000,
      );
      const errors = events
        .filter((e) => e.type === "session.error")
        .map((e) => e.error as Record<string, unknown>);
      return { sessionId, errors };
    };
    // No vault: the remote answers 401, which no retry can change.
    const unauthenticated = await failedTurn(cardUrl(remoteAgent.id));
    expect(unauthenticated.errors).toHaveLength(1);
    expect(unauthenticated.errors[0]).toMatchObject({ type: "a2a_agent_unavailable_error" });
    expect(String(unauthenticated.errors[0]?.message)).toContain("requires authentication (HTTP 401)");
    // 127.0.0.2 is loopback, and only 127.0.0.1 is allow-listed: refused before any connection.
    const forbidden = await failedTurn(cardUrl(remoteAgent.id).replace("127.0.0.1", "127.0.0.2"));
    expect(forbidden.errors[0]).toMatchObject({ type: "a2a_agent_unavailable_error" });
    expect(String(forbidden.errors[0]?.message)).toContain("is not allowed");
    expect(localRows("select id from credential_opens where session_id = ?", forbidden.sessionId)).toEqual(
      [],
    );
  }, 60_000);

  it("refuses bad a2a: URLs at create and update, naming the field", async () => {
    for (const [model, fragment] of [
      ["a2a:", "agent card URL"],
      ["a2a:/relative/card.json", "absolute"],
      ["a2a:ftp://example.com/card.json", "http or https"],
      ["a2a:https://user:secret@example.com/card.json", "credentials"],
    ] as const) {
      const error = await expectApiError(
        local.client.beta.agents.create({ name: "bad", model }),
        Anthropic.BadRequestError,
        { ...BAD_REQUEST, message: ["model:", fragment] },
      );
      expect(JSON.stringify(error.error)).not.toContain("secret");
    }
    const agent = await local.client.beta.agents.create({
      name: "ok",
      model: "a2a:https://agents.example.com/card.json",
    });
    await expectApiError(
      local.client.beta.agents.update(agent.id, {
        version: agent.version,
        model: "a2a:mailto:x@example.com",
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["model:", "http or https"] },
    );
  });

  it("admission refuses on_tool_use provisioning for an a2a: agent, naming the rule", async () => {
    const agent = await local.client.beta.agents.create({
      name: "d",
      model: "a2a:https://agents.example.com/card.json",
    });
    const environment = await local.client.beta.environments.create({
      name: "lazy",
      config: { type: "cloud", sandbox: { tier: "none", provisioning: "on_tool_use" } } as never,
    });
    await expectApiError(
      local.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ['sandbox_provisioning "on_tool_use"', "remote A2A agent"] },
    );
  });
});
