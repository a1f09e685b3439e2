/**
 * The A2A HTTP+JSON binding judged by the official client: `@a2a-js/sdk`'s ClientFactory with only
 * its REST transport picks the card's HTTP+JSON interface and drives the same tasks as JSON-RPC over
 * real HTTP (send, stream, get, list, cancel, resubscribe, input-required), and raw requests get
 * REST error bodies that write nothing and are never a 500.
 */
import { TaskState } from "@a2a-js/sdk";
import { RestTaskNotCancelableError, RestTaskNotFoundError } from "@a2a-js/sdk/errors";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  a2aClient,
  authedFetch,
  collect,
  describeEvent,
  partsText,
  stateName,
  userRequest,
} from "../support/a2aClient.js";
import { history, MODEL, WEATHER_TOOL } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ workerPollMs: 50 });
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
});

async function agent(tools: unknown[] = []) {
  const a = await t.client.beta.agents.create({ name: "rest agent", model: MODEL, tools: tools as never });
  return a.id;
}

const rest = (agentId: string) => `${t.server.url}/v1/a2a/agents/${agentId}/rest`;
const factCount = async (sessionId: string) => (await history(t.client, sessionId)).length;

async function raw(url: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const response = await authedFetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}

describe("A2A over HTTP+JSON through the official client", () => {
  it("a blocking send, GetTask and ListTasks go through the REST interface the card names", async () => {
    const agentId = await agent();
    const client = await a2aClient(t, agentId, "HTTP+JSON");
    const result = await client.sendMessage(userRequest("hello over rest"));
    if (!("status" in result)) throw new Error("expected a task");
    expect(stateName(result.status?.state)).toBe("COMPLETED");
    expect(result.contextId).toMatch(/^sesn_/);
    expect(partsText(result.artifacts.at(-1)?.parts)).toContain("hello over rest");

    const read = await client.getTask({ tenant: "", id: result.id, historyLength: undefined });
    expect(read).toEqual(result);
    const short = await client.getTask({ tenant: "", id: result.id, historyLength: 1 });
    expect(short.history).toHaveLength(1);
    const second = await client.sendMessage(userRequest("again", { contextId: result.contextId }));
    if (!("status" in second)) throw new Error("expected a task");
    const listed = await client.listTasks({
      tenant: "",
      contextId: result.contextId,
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 1,
      pageToken: "",
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks.map((task) => task.id)).toEqual([second.id]);
    expect(listed.nextPageToken).not.toBe("");
    // The binding's own media type is read like JSON.
    const typed = await raw(`${rest(agentId)}/message:send`, {
      method: "POST",
      headers: { "content-type": "application/a2a+json" },
      body: JSON.stringify({
        message: { role: "ROLE_USER", messageId: "typed-1", parts: [{ text: "typed" }] },
      }),
    });
    expect(typed.status).toBe(200);
    expect(typed.json.task.status.state).toBe("TASK_STATE_COMPLETED");
    // The same task read over JSON-RPC is the same task: one record, two bindings.
    const rpc = await a2aClient(t, agentId);
    expect(await rpc.getTask({ tenant: "", id: result.id, historyLength: undefined })).toEqual(read);
  });

  it("a stream ends completed; a dropped stream is resubscribed; cancel ends a slow task", async () => {
    process.env.AWAKEN_OFFLINE_DELAY_MS = "20";
    const agentId = await agent();
    const client = await a2aClient(t, agentId, "HTTP+JSON");
    const events = await collect(client.sendMessageStream(userRequest("stream a few words back to me")));
    expect(describeEvent(events[0]!)).toBe("task:SUBMITTED");
    expect(events.map(describeEvent)).toContain("artifactUpdate");
    expect(describeEvent(events.at(-1)!)).toBe("status:COMPLETED");

    const slow = "please repeat this fairly long sentence back to me slowly word by word so it takes a while";
    let taskId = "";
    for await (const event of client.sendMessageStream(userRequest(slow))) {
      if (event.payload?.$case === "task") taskId = event.payload.value.id;
      if (event.payload?.$case === "artifactUpdate") break;
    }
    const resumed = client.resubscribeTask({ tenant: "", id: taskId });
    const first = await resumed.next();
    expect(first.done ? "none" : describeEvent(first.value)).toBe("task:WORKING");
    const canceled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
    expect(stateName(canceled.status?.state)).toBe("CANCELED");
    const rest = await collect({ [Symbol.asyncIterator]: () => resumed });
    expect(describeEvent(rest.at(-1)!)).toBe("status:CANCELED");
    await expect(client.cancelTask({ tenant: "", id: taskId, metadata: undefined })).rejects.toBeInstanceOf(
      RestTaskNotCancelableError,
    );
  });

  it("a client tool's input-required is answered in the same task over REST", async () => {
    const agentId = await agent([WEATHER_TOOL]);
    const client = await a2aClient(t, agentId, "HTTP+JSON");
    const asked = await client.sendMessage(userRequest('call get_weather {"city":"Lima"}'));
    if (!("status" in asked)) throw new Error("expected a task");
    expect(stateName(asked.status?.state)).toBe("INPUT_REQUIRED");
    const answered = await client.sendMessage(
      userRequest("Mild, 18C", { taskId: asked.id, contextId: asked.contextId }),
    );
    if (!("status" in answered)) throw new Error("expected a task");
    expect(stateName(answered.status?.state)).toBe("COMPLETED");
    expect(partsText(answered.artifacts.at(-1)?.parts)).toContain("Mild, 18C");
    const events = await history(t.client, asked.contextId);
    expect(events.filter((e) => e.type === "user.custom_tool_result")).toHaveLength(1);
  });

  it("refusals are REST error bodies the client types, never a 500, and none writes anything", async () => {
    const agentId = await agent();
    const client = await a2aClient(t, agentId, "HTTP+JSON");
    const done = await client.sendMessage(userRequest("hi"));
    if (!("status" in done)) throw new Error("expected a task");
    const before = await factCount(done.contextId);
    await expect(client.getTask({ tenant: "", id: "nope", historyLength: undefined })).rejects.toBeInstanceOf(
      RestTaskNotFoundError,
    );

    const base = rest(agentId);
    const json = { "content-type": "application/json" };
    const cases: Array<[string, RequestInit & { headers?: Record<string, string> }, number, string]> = [
      ["/message:send", { method: "POST", headers: json, body: '{"message": {' }, 400, "INVALID_ARGUMENT"],
      ["/message:send", { method: "POST", headers: json, body: "[]" }, 400, "INVALID_ARGUMENT"],
      ["/message:send", { method: "POST", headers: json, body: "{}" }, 400, "INVALID_ARGUMENT"],
      [
        "/message:send",
        { method: "POST", headers: json, body: JSON.stringify({ message: { parts: "x" } }) },
        400,
        "INVALID_ARGUMENT",
      ],
      [
        "/message:send",
        {
          method: "POST",
          headers: json,
          body: JSON.stringify({
            message: {
              messageId: "m1",
              contextId: done.contextId,
              taskId: done.id,
              parts: [{ text: "more" }],
            },
          }),
        },
        400,
        "FAILED_PRECONDITION",
      ],
      ["/message:stream", { method: "POST", headers: json, body: "{}" }, 400, "INVALID_ARGUMENT"],
      ["/tasks?pageSize=1000", {}, 400, "INVALID_ARGUMENT"],
      ["/tasks?status=BOGUS", {}, 400, "INVALID_ARGUMENT"],
      ["/tasks?historyLength=-1", {}, 400, "INVALID_ARGUMENT"],
      ["/tasks?pageToken=garbage", {}, 400, "INVALID_ARGUMENT"],
      [`/tasks/${done.id}?historyLength=abc`, {}, 400, "INVALID_ARGUMENT"],
      [`/tasks/${encodeURIComponent(`${done.contextId}.sevt_unknown`)}`, {}, 404, "NOT_FOUND"],
      [`/tasks/${done.id}:subscribe`, {}, 400, "FAILED_PRECONDITION"],
      [`/tasks/${done.id}:cancel`, { method: "POST" }, 400, "FAILED_PRECONDITION"],
      [`/tasks/${done.id}:explode`, { method: "POST" }, 404, "NOT_FOUND"],
      ["/nothing/here", {}, 404, "NOT_FOUND"],
      ["/message:send", {}, 405, "INVALID_ARGUMENT"],
      ["/tasks", { headers: { "a2a-version": "0.3" } }, 400, "FAILED_PRECONDITION"],
      [
        "/message:send",
        { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" },
        400,
        "INVALID_ARGUMENT",
      ],
    ];
    for (const [path, init, status, name] of cases) {
      const answer = await raw(`${base}${path}`, init);
      expect(answer.status, path).toBe(status);
      expect(answer.json?.error, path).toMatchObject({
        code: status,
        status: name,
        message: expect.any(String),
      });
    }
    expect((await raw(`${base}/message:send`)).headers.get("allow")).toBe("POST");
    // A path that is not valid percent-encoding is refused before any route (the shared envelope).
    expect((await raw(`${base}/tasks/%E0%A4%A`)).status).toBe(400);
    const unknownAgent = await raw(`${rest("agent_nope")}/tasks`);
    expect(unknownAgent.status).toBe(404);
    expect(unknownAgent.json.error.status).toBe("NOT_FOUND");

    const anonymous = await fetch(`${base}/tasks`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(((await anonymous.json()) as { error: { status: string } }).error.status).toBe("UNAUTHENTICATED");

    expect(await factCount(done.contextId)).toBe(before);
  });
});
