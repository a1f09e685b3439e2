/**
 * The A2A edge judged by the official client, `@a2a-js/sdk`'s ClientFactory over JSON-RPC, over
 * real HTTP against the real server and the offline model: the card, blocking and streaming sends,
 * tasks read and listed, cancel, input-required answered by A2A and by the Managed wire, the v0.3
 * method names, and JSON-RPC errors that write nothing.
 */
import { Role, TaskState } from "@a2a-js/sdk";
import { LegacyJsonRpcTransport } from "@a2a-js/sdk/compat/v0_3/client";
import { JsonRpcTaskNotFoundError, JsonRpcUnsupportedOperationError } from "@a2a-js/sdk/errors";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  a2aBase,
  a2aClient,
  authedFetch,
  collect,
  dataPart,
  describeEvent,
  partsText,
  stateName,
  userRequest,
} from "../support/a2aClient.js";
import { history, MODEL, WEATHER_TOOL, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50, allowWeakerTiers: true });
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
});

async function agent(tools: unknown[] = [], description = "An agent reached over A2A.") {
  const a = await t.client.beta.agents.create({
    name: "a2a agent",
    description,
    model: MODEL,
    tools: tools as never,
  });
  return a.id;
}

/** An agent whose bash always asks, on a tier-"none" environment, with a session made over Managed. */
async function askingSession() {
  const agentId = await agent([
    {
      type: "agent_toolset_20260401",
      configs: [{ name: "bash", permission_policy: { type: "always_ask" } }],
    },
  ]);
  const environment = await t.client.beta.environments.create({
    name: "a2a-hands",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: environment.id });
  return { agentId, sessionId: session.id };
}

async function rpc(agentId: string, body: string, headers: Record<string, string> = {}) {
  const response = await authedFetch(`${t.server.url}/v1/a2a/agents/${agentId}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return { status: response.status, json: (await response.json()) as Record<string, Json> };
}

// biome-ignore lint/suspicious/noExplicitAny: raw wire JSON, read field by field in assertions.
type Json = any;

const factCount = async (sessionId: string) => (await history(t.client, sessionId)).length;

describe("A2A through the official client", () => {
  it("the card needs the workspace API key and describes the agent's active version", async () => {
    const agentId = await agent([WEATHER_TOOL]);
    const url = `${a2aBase(t, agentId)}.well-known/agent-card.json`;
    expect((await fetch(url)).status).toBe(401);
    const response = await authedFetch(url);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, Json>;
    expect(card).toMatchObject({
      name: "a2a agent",
      description: "An agent reached over A2A.",
      capabilities: { streaming: true },
      supportedInterfaces: [
        {
          url: `${t.server.url}/v1/a2a/agents/${agentId}`,
          protocolBinding: "JSONRPC",
          protocolVersion: "1.0",
        },
        { protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        {
          url: `${t.server.url}/v1/a2a/agents/${agentId}/rest`,
          protocolBinding: "HTTP+JSON",
          protocolVersion: "1.0",
        },
      ],
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: "bearer" } } },
    });
    expect(card.skills.map((s: { id: string }) => s.id)).toEqual(["get_weather"]);
    expect((await authedFetch(`${a2aBase(t, "agent_nope")}.well-known/agent-card.json`)).status).toBe(404);
  });

  it("a blocking send returns the completed task with the answer as an artifact; context = session", async () => {
    const agentId = await agent();
    const client = await a2aClient(t, agentId);
    const result = await client.sendMessage(userRequest("hello there"));
    if (!("status" in result)) throw new Error("expected a task");
    expect(stateName(result.status?.state)).toBe("COMPLETED");
    expect(result.contextId).toMatch(/^sesn_/);
    expect(partsText(result.artifacts.at(-1)?.parts)).toContain("hello there");
    expect(result.history.map((m) => m.role)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT]);
    const session = await t.client.beta.sessions.retrieve(result.contextId);
    expect(session.agent.id).toBe(agentId);

    // Same context: a second task in the same session; GetTask reads each back.
    const second = await client.sendMessage(userRequest("again", { contextId: result.contextId }));
    if (!("status" in second)) throw new Error("expected a task");
    expect(second.contextId).toBe(result.contextId);
    expect(second.id).not.toBe(result.id);
    const read = await client.getTask({ tenant: "", id: result.id, historyLength: undefined });
    expect(read).toEqual(result);
    const listed = await client.listTasks({
      tenant: "",
      contextId: result.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks.map((task) => task.id)).toEqual([second.id, result.id]);
    const all = await client.listTasks({
      tenant: "",
      contextId: "",
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 1,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(all.tasks.map((task) => task.id)).toEqual([second.id]);
    const next = await client.listTasks({
      tenant: "",
      contextId: "",
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 5,
      pageToken: all.nextPageToken,
      statusTimestampAfter: undefined,
    });
    expect(next.tasks.map((task) => task.id)).toEqual([result.id]);
    expect(next.nextPageToken).toBe("");
  });

  it("a stream starts with the task, streams the text as an artifact, and ends completed", async () => {
    process.env.AWAKEN_OFFLINE_DELAY_MS = "5";
    const agentId = await agent();
    const client = await a2aClient(t, agentId);
    const events = await collect(client.sendMessageStream(userRequest("stream a few words back to me")));
    const kinds = events.map(describeEvent);
    expect(kinds[0]).toBe("task:SUBMITTED");
    expect(kinds).toContain("status:WORKING");
    expect(kinds.at(-1)).toBe("status:COMPLETED");
    const artifacts = events.flatMap((e) => (e.payload?.$case === "artifactUpdate" ? [e.payload.value] : []));
    expect(artifacts.length).toBeGreaterThan(1);
    const last = artifacts.at(-1)!;
    expect(last.lastChunk).toBe(true);
    expect(partsText(last.artifact?.parts)).toContain("stream a few words back to me");
    const taskId = events[0]?.payload?.$case === "task" ? events[0].payload.value.id : "";
    const task = await client.getTask({ tenant: "", id: taskId, historyLength: undefined });
    expect(task.artifacts).toEqual([last.artifact]);
  });

  it("cancel interrupts a slow turn; the task is canceled, stays so, and cannot be resubscribed", async () => {
    process.env.AWAKEN_OFFLINE_DELAY_MS = "40";
    const agentId = await agent();
    const client = await a2aClient(t, agentId);
    const stream = client.sendMessageStream(
      userRequest(
        "please repeat this fairly long sentence back to me slowly word by word so it takes a while",
      ),
    );
    let taskId = "";
    let cancelSent = false;
    const seen: string[] = [];
    for await (const event of stream) {
      seen.push(describeEvent(event));
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      // Once: updates streamed before the cancel landed may still arrive after it.
      if (event.payload?.$case === "artifactUpdate" && !cancelSent) {
        cancelSent = true;
        const canceled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
        expect(stateName(canceled.status?.state)).toBe("CANCELED");
      }
    }
    expect(seen.at(-1)).toBe("status:CANCELED");
    const contextId = taskId.split(".")[0]!;
    const events = await history(t.client, contextId);
    expect(events.map((e) => e.type)).toContain("user.interrupt");
    expect(events.map((e) => e.type)).not.toContain("agent.message");
    await expect(client.cancelTask({ tenant: "", id: taskId, metadata: undefined })).rejects.toThrow(
      /canceled/,
    );
    await expect(collect(client.resubscribeTask({ tenant: "", id: taskId }))).rejects.toBeInstanceOf(
      JsonRpcUnsupportedOperationError,
    );
  });

  it("SubscribeToTask after a dropped stream: the task from committed facts, then live to completed", async () => {
    process.env.AWAKEN_OFFLINE_DELAY_MS = "40";
    const agentId = await agent();
    const client = await a2aClient(t, agentId);
    let taskId = "";
    for await (const event of client.sendMessageStream(
      userRequest(
        "please repeat this fairly long sentence back to me slowly word by word so it takes a while",
      ),
    )) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (event.payload?.$case === "artifactUpdate") break;
    }
    // Dropping the stream does not stop the task.
    expect(
      stateName((await client.getTask({ tenant: "", id: taskId, historyLength: undefined })).status?.state),
    ).toBe("WORKING");
    const events = await collect(client.resubscribeTask({ tenant: "", id: taskId }));
    expect(describeEvent(events[0]!)).toBe("task:WORKING");
    expect(describeEvent(events.at(-1)!)).toBe("status:COMPLETED");
    const task = await client.getTask({ tenant: "", id: taskId, historyLength: undefined });
    expect(partsText(task.artifacts.at(-1)?.parts)).toContain("word by word");
  });

  it("a retried message id gets the task its first send made: no second context, no second task", async () => {
    const agentId = await agent([WEATHER_TOOL]);
    const client = await a2aClient(t, agentId);
    const request = userRequest('call get_weather {"city":"Bergen"}');
    const first = await client.sendMessage(request);
    const again = await client.sendMessage(request);
    if (!("status" in first) || !("status" in again)) throw new Error("expected tasks");
    expect(again.id).toBe(first.id);
    expect(again.contextId).toBe(first.contextId);
    expect(stateName(again.status?.state)).toBe("INPUT_REQUIRED");
    const sessions = await t.client.beta.sessions.list({ agent_id: agentId } as never);
    expect(sessions.data.map((s) => s.id)).toEqual([first.contextId]);

    // The answer retried after the task moved on is the same answer, not a refusal or a second one.
    const answer = userRequest("Rainy, 9C", { taskId: first.id, contextId: first.contextId });
    const answered = await client.sendMessage(answer);
    const retried = await client.sendMessage(answer);
    if (!("status" in answered) || !("status" in retried)) throw new Error("expected tasks");
    expect(retried.id).toBe(first.id);
    expect(stateName(retried.status?.state)).toBe("COMPLETED");
    const events = await history(t.client, first.contextId);
    expect(events.filter((e) => e.type === "user.message")).toHaveLength(1);
    expect(events.filter((e) => e.type === "user.custom_tool_result")).toHaveLength(1);
  });

  it("a client tool makes the task input-required; text in the same task answers it", async () => {
    const agentId = await agent([WEATHER_TOOL]);
    const client = await a2aClient(t, agentId);
    const asked = await collect(client.sendMessageStream(userRequest('call get_weather {"city":"Oslo"}')));
    const last = asked.at(-1)!;
    expect(describeEvent(last)).toBe("status:INPUT_REQUIRED");
    const status = last.payload?.$case === "statusUpdate" ? last.payload.value : undefined;
    const pending = status?.status?.message?.parts.find((p) => p.content?.$case === "data");
    expect(pending?.content?.$case === "data" && pending.content.value.pendingToolCalls).toMatchObject([
      { name: "get_weather", answer: "result" },
    ]);
    const ids = { taskId: status!.taskId, contextId: status!.contextId };

    const answered = await collect(client.sendMessageStream(userRequest("Sunny, 21C", ids)));
    expect(describeEvent(answered[0]!)).toBe("task:WORKING");
    expect(describeEvent(answered.at(-1)!)).toBe("status:COMPLETED");
    const task = await client.getTask({ tenant: "", id: ids.taskId, historyLength: undefined });
    expect(partsText(task.artifacts.at(-1)?.parts)).toContain("Sunny, 21C");
    const events = await history(t.client, ids.contextId);
    expect(events.filter((e) => e.type === "user.custom_tool_result")).toHaveLength(1);
    // A finished task takes no more messages, and the refusal writes nothing.
    const before = await factCount(ids.contextId);
    await expect(client.sendMessage(userRequest("more", ids))).rejects.toBeInstanceOf(
      JsonRpcUnsupportedOperationError,
    );
    expect(await factCount(ids.contextId)).toBe(before);
  });

  it("an approval is answered with a data part {approved}; a denial never runs the tool", async () => {
    const { agentId, sessionId } = await askingSession();
    const client = await a2aClient(t, agentId);
    const first = await client.sendMessage(
      userRequest('call bash {"command":"echo a2a-approved"}', { contextId: sessionId }),
    );
    if (!("status" in first)) throw new Error("expected a task");
    expect(stateName(first.status?.state)).toBe("INPUT_REQUIRED");
    expect(partsText(first.status?.message?.parts)).toContain("approved");
    const allowed = await client.sendMessage(
      userRequest([dataPart({ approved: true })], { taskId: first.id, contextId: sessionId }),
    );
    if (!("status" in allowed)) throw new Error("expected a task");
    expect(stateName(allowed.status?.state)).toBe("COMPLETED");
    expect(partsText(allowed.artifacts.at(-1)?.parts)).toContain("a2a-approved");

    const second = await client.sendMessage(
      userRequest('call bash {"command":"echo must-not-run"}', { contextId: sessionId }),
    );
    if (!("status" in second)) throw new Error("expected a task");
    const denied = await client.sendMessage(
      userRequest([dataPart({ approved: false, reason: "not today" })], {
        taskId: second.id,
        contextId: sessionId,
      }),
    );
    if (!("status" in denied)) throw new Error("expected a task");
    expect(stateName(denied.status?.state)).toBe("COMPLETED");
    const events = await history(t.client, sessionId);
    expect(events.filter((e) => e.type === "user.tool_confirmation")).toMatchObject([
      { result: "allow" },
      { result: "deny", deny_message: "not today" },
    ]);
  });

  it("input-required answered over the Managed wire: the A2A task completes", async () => {
    const agentId = await agent([WEATHER_TOOL]);
    const client = await a2aClient(t, agentId);
    const asked = await client.sendMessage(userRequest('call get_weather {"city":"Rome"}'));
    if (!("status" in asked)) throw new Error("expected a task");
    expect(stateName(asked.status?.state)).toBe("INPUT_REQUIRED");
    const sessionId = asked.contextId;
    const call = (await history(t.client, sessionId)).find((e) => e.type === "agent.custom_tool_use")!;
    const live = collect(client.resubscribeTask({ tenant: "", id: asked.id }));
    await t.client.beta.sessions.events.send(sessionId, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: call.id,
          content: [{ type: "text", text: "Rainy, 12C" }],
        },
      ],
    } as never);
    await waitForHistory(t.client, sessionId, (h) => h.at(-1)?.type === "session.status_idle");
    const task = await client.getTask({ tenant: "", id: asked.id, historyLength: undefined });
    expect(stateName(task.status?.state)).toBe("COMPLETED");
    expect(partsText(task.artifacts.at(-1)?.parts)).toContain("Rainy, 12C");
    // The resubscribe began at input-required: its snapshot alone, since the task was at rest.
    expect((await live).map(describeEvent)).toEqual(["task:INPUT_REQUIRED"]);
  });

  it("the v0.3 method names work on the same URL, chosen by the method or the A2A-Version header", async () => {
    const agentId = await agent();
    const sent = await rpc(
      agentId,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: {
          message: {
            kind: "message",
            role: "user",
            messageId: "m-legacy-1",
            parts: [{ kind: "text", text: "legacy hello" }],
          },
        },
      }),
    );
    expect(sent.status).toBe(200);
    expect(sent.json.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    const got = await rpc(
      agentId,
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tasks/get", params: { id: sent.json.result.id } }),
      { "a2a-version": "0.3" },
    );
    expect(got.json.result).toMatchObject({
      kind: "task",
      id: sent.json.result.id,
      contextId: sent.json.result.contextId,
    });
    const v1 = await rpc(
      agentId,
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "GetTask", params: { id: sent.json.result.id } }),
    );
    expect(v1.json.result).toMatchObject({
      id: sent.json.result.id,
      status: { state: "TASK_STATE_COMPLETED" },
    });
  });

  it("a v0.3 peer (the SDK's 0.3 transport: message/stream, tasks/get) streams, answers a client tool, reads back", async () => {
    const agentId = await agent([WEATHER_TOOL]);
    const legacy = new LegacyJsonRpcTransport({
      endpoint: `${t.server.url}/v1/a2a/agents/${agentId}`,
      fetchImpl: authedFetch,
    });
    const asked = await collect(legacy.sendMessageStream(userRequest('call get_weather {"city":"Lima"}')));
    expect(asked.map(describeEvent).at(-1)).toBe("status:INPUT_REQUIRED");
    const update = asked.at(-1)?.payload;
    if (update?.$case !== "statusUpdate") throw new Error("expected a status update");
    const ids = { taskId: update.value.taskId, contextId: update.value.contextId };
    const answered = await collect(legacy.sendMessageStream(userRequest("Warm, 24C", ids)));
    expect(answered.map(describeEvent).at(-1)).toBe("status:COMPLETED");
    const task = await legacy.getTask({ tenant: "", id: ids.taskId, historyLength: undefined });
    expect(stateName(task.status?.state)).toBe("COMPLETED");
    expect(partsText(task.artifacts.at(-1)?.parts)).toContain("Warm, 24C");
  });

  it("JSON-RPC errors: unknown task, bad params, parse error, unknown method; none writes anything", async () => {
    const agentId = await agent();
    const client = await a2aClient(t, agentId);
    const done = await client.sendMessage(userRequest("hi"));
    if (!("status" in done)) throw new Error("expected a task");
    const sessionId = done.contextId;
    const before = await factCount(sessionId);

    await expect(client.getTask({ tenant: "", id: "nope", historyLength: undefined })).rejects.toBeInstanceOf(
      JsonRpcTaskNotFoundError,
    );
    await expect(
      client.getTask({ tenant: "", id: `${sessionId}.sevt_unknown`, historyLength: undefined }),
    ).rejects.toBeInstanceOf(JsonRpcTaskNotFoundError);
    // Another agent's task is not found under this agent.
    const other = await a2aClient(t, await agent());
    await expect(other.getTask({ tenant: "", id: done.id, historyLength: undefined })).rejects.toBeInstanceOf(
      JsonRpcTaskNotFoundError,
    );

    const v1 = { "a2a-version": "1.0" };
    const parse = await rpc(agentId, '{"jsonrpc":"2.0", "id": 1, "method": "SendMessage", "params": {', v1);
    expect(parse.status).toBe(200);
    expect(parse.json.error.code).toBe(-32700);
    const noMessage = await rpc(
      agentId,
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "SendMessage", params: {} }),
      v1,
    );
    expect(noMessage.json).toMatchObject({ id: 2, error: { code: -32602 } });
    const badContext = await rpc(
      agentId,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "SendMessage",
        params: {
          message: { role: "ROLE_USER", messageId: "x", contextId: "ctx-unknown", parts: [{ text: "hi" }] },
        },
      }),
      v1,
    );
    expect(badContext.json).toMatchObject({ id: 3, error: { code: -32602 } });
    const unknownMethod = await rpc(
      agentId,
      JSON.stringify({ jsonrpc: "2.0", id: 4, method: "Nope", params: {} }),
      v1,
    );
    expect(unknownMethod.json.error.code).toBe(-32601);
    const notCancelable = await rpc(
      agentId,
      JSON.stringify({ jsonrpc: "2.0", id: 5, method: "CancelTask", params: { id: done.id } }),
      v1,
    );
    expect(notCancelable.json.error.code).toBe(-32002);
    const push = await rpc(
      agentId,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 6,
        method: "GetTaskPushNotificationConfig",
        params: { taskId: done.id, id: "x" },
      }),
      v1,
    );
    // Push notifications are supported (test/e2e/a2aPush.test.ts); a config nobody set is not found.
    expect(push.json.error.code).toBe(-32001);
    // Whatever a client sends, the answer is a JSON-RPC error, never a 500.
    for (const odd of [
      "[]",
      '"text"',
      "{}",
      JSON.stringify({ jsonrpc: "2.0", id: 8, method: "SendMessage", params: "x" }),
      JSON.stringify({ jsonrpc: "2.0", id: 9, method: "SendMessage", params: { message: { parts: "x" } } }),
      JSON.stringify({ jsonrpc: "2.0", id: 10, method: "SendMessage", params: { message: { parts: [{}] } } }),
      JSON.stringify({ jsonrpc: "2.0", id: 11, method: "GetTask", params: { id: { nested: true } } }),
      JSON.stringify({ jsonrpc: "2.0", id: 12, method: "ListTasks", params: { pageSize: 1000 } }),
      JSON.stringify({ jsonrpc: "2.0", id: 13, method: "ListTasks", params: { pageToken: "garbage" } }),
      JSON.stringify({ jsonrpc: "2.0", id: 14, method: "SendStreamingMessage", params: {} }),
      JSON.stringify({ jsonrpc: "2.0", id: 15, method: "SubscribeToTask", params: { id: "nope" } }),
      JSON.stringify({ jsonrpc: "2.0", id: 16, method: "message/send", params: { message: { parts: 7 } } }),
    ]) {
      const answer = await rpc(agentId, odd, odd.includes("message/send") ? {} : v1);
      expect(answer.status, odd).toBe(200);
      expect(answer.json.error?.code, odd).toEqual(expect.any(Number));
      expect(answer.json.error.code, odd).not.toBe(-32603);
    }
    const unauthenticated = await fetch(`${t.server.url}/v1/a2a/agents/${agentId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: done.id } }),
    });
    expect(unauthenticated.status).toBe(401);
    expect(((await unauthenticated.json()) as { jsonrpc: string }).jsonrpc).toBe("2.0");
    const unknownAgent = await rpc(
      "agent_unknown",
      JSON.stringify({ jsonrpc: "2.0", id: 17, method: "GetTask", params: { id: done.id } }),
      v1,
    );
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.json).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    expect(await factCount(sessionId)).toBe(before);
    const sessions = await t.client.beta.sessions.list({ agent_id: agentId } as never);
    expect(sessions.data).toHaveLength(1);
  });
});
