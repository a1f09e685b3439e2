/**
 * The AG-UI edge judged by the official client, `@ag-ui/client`'s HttpAgent, over real HTTP
 * against the real server and the offline model: event order, messages, client tools, approvals
 * as interrupts, abort as interrupt, reconnect snapshots, refusals and pre-stream errors.
 */
import { runHttpRequest, transformHttpEventStream } from "@ag-ui/client";
import { EventType } from "@ag-ui/core";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { agUiAgent, agUiUrl, recordRun, say } from "../support/agUiAgent.js";
import {
  history,
  MODEL,
  sleep,
  WEATHER_TOOL,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  // Hand tools run on tier "none" in these tests' environments: the operator option enables it.
  t = await startTestServer({ workerPollMs: 50, allowWeakerTiers: true });
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
});

/** The protocol's protobuf media type (`@ag-ui/proto`'s AGUI_MEDIA_TYPE). */
const AGUI_PROTO = "application/vnd.ag-ui.event+proto";

const WEATHER = {
  name: WEATHER_TOOL.name,
  description: WEATHER_TOOL.description,
  parameters: WEATHER_TOOL.input_schema,
};

async function agent(tools: unknown[] = []) {
  return t.client.beta.agents.create({ name: "ag-ui", model: MODEL, tools: tools as never });
}

/** The session a thread opened: each test's agent has exactly one. */
async function sessionOf(agentId: string): Promise<string> {
  const page = await t.client.beta.sessions.list({ agent_id: agentId } as never);
  expect(page.data).toHaveLength(1);
  return page.data[0]!.id;
}

/** A Managed session on a tier-"none" environment, whose id names it as an AG-UI thread. */
async function handSession(bashPolicy: "always_allow" | "always_ask") {
  const a = await agent([
    { type: "agent_toolset_20260401", configs: [{ name: "bash", permission_policy: { type: bashPolicy } }] },
  ]);
  const environment = await t.client.beta.environments.create({
    name: "ag-ui-hands",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  const session = await t.client.beta.sessions.create({ agent: a.id, environment_id: environment.id });
  return { agentId: a.id, sessionId: session.id };
}

const types = (events: WireEvent[]) => events.map((e) => e.type);
const count = (events: WireEvent[], type: string) => events.filter((e) => e.type === type).length;

describe("AG-UI runs through the official HttpAgent", () => {
  it("a text run: RUN_STARTED, the streamed text, RUN_FINISHED; newMessages is the assistant's reply", async () => {
    const a = await agent();
    const client = agUiAgent(t, a.id);
    const userId = say(client, "hello there");
    const run = await recordRun(client);

    expect(run.types[0]).toBe(EventType.RUN_STARTED);
    expect(run.types.at(-1)).toBe(EventType.RUN_FINISHED);
    const body = run.types.slice(1, -1);
    expect(body[0]).toBe(EventType.TEXT_MESSAGE_START);
    expect(body.at(-1)).toBe(EventType.TEXT_MESSAGE_END);
    expect(new Set(body.slice(1, -1))).toEqual(new Set([EventType.TEXT_MESSAGE_CONTENT]));
    expect(run.events[0]).toMatchObject({ threadId: client.threadId });
    expect(run.finished).toMatchObject({ threadId: client.threadId, outcome: { type: "success" } });
    expect(run.result.newMessages).toEqual([
      {
        id: expect.stringMatching(/^sevt_/),
        role: "assistant",
        content: "[offline model] You said: hello there",
      },
    ]);
    expect(client.messages.map((m) => m.id)[0]).toBe(userId);

    const events = await history(t.client, await sessionOf(a.id));
    const message = events.find((e) => e.type === "user.message");
    expect(message?.content).toEqual([{ type: "text", text: "hello there" }]);
    expect(events.find((e) => e.type === "agent.message")?.id).toBe(run.result.newMessages[0]?.id);
  });

  it("a server tool: TOOL_CALL_START/ARGS/END under the text, TOOL_CALL_RESULT, then the answer", async () => {
    const { agentId, sessionId } = await handSession("always_allow");
    const client = agUiAgent(t, agentId, sessionId);
    say(client, 'call bash {"command":"echo ag-ui-tool"}');
    const run = await recordRun(client);

    // The call's arguments stream while its text is still open; the committed facts close both.
    const at = (type: string) => run.types.indexOf(type);
    expect(run.types.slice(0, 3)).toEqual([
      EventType.RUN_STARTED,
      EventType.MESSAGES_SNAPSHOT,
      EventType.TEXT_MESSAGE_START,
    ]);
    expect(at(EventType.TOOL_CALL_START)).toBeLessThan(at(EventType.TOOL_CALL_ARGS));
    expect(run.types.lastIndexOf(EventType.TOOL_CALL_ARGS)).toBeLessThan(at(EventType.TOOL_CALL_END));
    expect(at(EventType.TOOL_CALL_END)).toBeLessThan(at(EventType.TOOL_CALL_RESULT));
    expect(run.types.slice(at(EventType.TOOL_CALL_RESULT) + 1)).toEqual([
      EventType.TEXT_MESSAGE_START,
      ...Array(run.types.length - at(EventType.TOOL_CALL_RESULT) - 4).fill(EventType.TEXT_MESSAGE_CONTENT),
      EventType.TEXT_MESSAGE_END,
      EventType.RUN_FINISHED,
    ]);
    const start = run.events.find((e) => e.type === EventType.TOOL_CALL_START) as unknown as WireEvent;
    const result = run.events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as unknown as WireEvent;
    expect(start).toMatchObject({ toolCallName: "bash" });
    expect(result).toMatchObject({
      toolCallId: start.toolCallId,
      content: expect.stringContaining("ag-ui-tool"),
    });
    expect(run.finished?.outcome).toEqual({ type: "success" });

    const [, assistant, tool, answer] = client.messages;
    expect(assistant).toMatchObject({
      role: "assistant",
      content: "[offline model] Calling bash.",
      toolCalls: [
        { id: start.toolCallId, function: { name: "bash", arguments: '{"command":"echo ag-ui-tool"}' } },
      ],
    });
    expect(tool).toMatchObject({ role: "tool", toolCallId: start.toolCallId });
    expect(answer).toMatchObject({
      role: "assistant",
      content: expect.stringContaining("Tool result received"),
    });

    const events = await history(t.client, sessionId);
    expect(events.find((e) => e.type === "agent.tool_use")?.id).toBe(start.toolCallId);
  });

  it("a client tool: pendingToolCallIds, the tool message answers it in the next run, committed once", async () => {
    const a = await agent([WEATHER_TOOL]);
    const client = agUiAgent(t, a.id);
    say(client, 'call get_weather {"city":"Paris"}');
    const first = await recordRun(client, { tools: [WEATHER] });
    const callId = (first.events.find((e) => e.type === EventType.TOOL_CALL_START) as unknown as WireEvent)
      .toolCallId as string;
    expect(first.finished?.outcome).toEqual({ type: "success", pendingToolCallIds: [callId] });
    expect(first.types.includes(EventType.TOOL_CALL_RESULT)).toBe(false);

    client.addMessage({ id: "tool-answer-1", role: "tool", toolCallId: callId, content: "Sunny, 21C" });
    const second = await recordRun(client, { tools: [WEATHER] });
    expect(second.types).toContain(EventType.MESSAGES_SNAPSHOT);
    expect(second.finished?.outcome).toEqual({ type: "success" });
    expect(second.result.newMessages).toEqual([
      expect.objectContaining({ role: "assistant", content: expect.stringContaining("Sunny, 21C") }),
    ]);
    // The client's own tool message keeps its id and place.
    expect(client.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(client.messages[2]?.id).toBe("tool-answer-1");

    // The whole list again, nothing new: no second result, no second message.
    const third = await recordRun(client, { tools: [WEATHER] });
    expect(third.types).toEqual([EventType.RUN_STARTED, EventType.MESSAGES_SNAPSHOT, EventType.RUN_FINISHED]);
    const events = await history(t.client, await sessionOf(a.id));
    expect(count(events, "user.custom_tool_result")).toBe(1);
    expect(count(events, "user.message")).toBe(1);
  });

  it("an approval: RUN_FINISHED interrupt, a run without resume is rejected client-side, resume allows it", async () => {
    const { agentId, sessionId } = await handSession("always_ask");
    const client = agUiAgent(t, agentId, sessionId);
    say(client, 'call bash {"command":"echo approved-run"}');
    const first = await recordRun(client);
    const outcome = first.finished?.outcome as { type: string; interrupts: Array<Record<string, unknown>> };
    expect(outcome.type).toBe("interrupt");
    const callId = (first.events.find((e) => e.type === EventType.TOOL_CALL_START) as unknown as WireEvent)
      .toolCallId as string;
    expect(outcome.interrupts).toEqual([
      {
        id: expect.any(String),
        reason: "tool_approval",
        toolCallId: callId,
        message: expect.stringContaining("bash"),
      },
    ]);
    expect(client.pendingInterrupts.map((i) => i.id)).toEqual([outcome.interrupts[0]?.id]);

    await expect(client.runAgent()).rejects.toThrow(/pending interrupt/);

    const interruptId = client.pendingInterrupts[0]!.id;
    const second = await recordRun(client, {
      resume: [{ interruptId, status: "resolved", payload: { approved: true } }],
    });
    const result = second.events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as unknown as WireEvent;
    expect(result).toMatchObject({ toolCallId: callId, content: expect.stringContaining("approved-run") });
    expect(second.finished?.outcome).toEqual({ type: "success" });
    expect(client.pendingInterrupts).toEqual([]);
    const events = await history(t.client, sessionId);
    expect(events.find((e) => e.type === "user.tool_confirmation")).toMatchObject({ result: "allow" });

    // The interrupt is answered: naming it again (a client that missed the answer, e.g. one given
    // over another protocol) enters nothing; the run reports the thread as it is, which clears the
    // client's pending interrupts instead of leaving it unable to run.
    const before = (await history(t.client, sessionId)).length;
    const stale = agUiAgent(t, agentId, sessionId);
    const again = await recordRun(stale, { resume: [{ interruptId, status: "resolved" }] });
    expect(again.runError).toBeUndefined();
    expect(again.finished?.outcome ?? { type: "success" }).toMatchObject({ type: "success" });
    expect(stale.pendingInterrupts).toEqual([]);
    expect((await history(t.client, sessionId)).length).toBe(before);
    // An interrupt id this thread never issued is still refused.
    const made = await recordRun(agUiAgent(t, agentId, sessionId), {
      resume: [{ interruptId: "approval:sevt_never", status: "resolved" }],
    });
    expect(made.runError).toMatchObject({ code: "interrupt_not_pending" });
  });

  it("an approval denied through resume: the tool never runs and the model is told so", async () => {
    const { agentId, sessionId } = await handSession("always_ask");
    const client = agUiAgent(t, agentId, sessionId);
    say(client, 'call bash {"command":"echo must-not-run"}');
    await recordRun(client);
    const interruptId = client.pendingInterrupts[0]!.id;
    const denied = await recordRun(client, {
      resume: [{ interruptId, status: "resolved", payload: { approved: false, reason: "not today" } }],
    });
    const result = denied.events.find((e) => e.type === EventType.TOOL_CALL_RESULT) as unknown as WireEvent;
    expect(result.content).toContain("not today");
    expect(result.content).not.toContain("must-not-run\n");
    expect(denied.finished?.outcome).toEqual({ type: "success" });
    const events = await history(t.client, sessionId);
    expect(events.find((e) => e.type === "user.tool_confirmation")).toMatchObject({
      result: "deny",
      deny_message: "not today",
    });
  });

  it("abortRun() interrupts the turn: the Managed history shows the interrupt and the idle", async () => {
    process.env.AWAKEN_OFFLINE_DELAY_MS = "40";
    const a = await agent();
    const client = agUiAgent(t, a.id);
    say(client, "please repeat this fairly long sentence back to me slowly word by word so it takes a while");
    let sawText!: () => void;
    const textSeen = new Promise<void>((resolve) => {
      sawText = resolve;
    });
    const done = client.runAgent(undefined, { onTextMessageContentEvent: () => sawText() });
    await textSeen;
    client.abortRun();
    await done;
    const events = await waitForHistory(t.client, await sessionOf(a.id), (h) =>
      h.some((e) => e.type === "user.interrupt"),
    );
    const tail = types(events).slice(types(events).indexOf("user.interrupt"));
    expect(tail).toContain("session.status_idle");
    expect(types(events)).not.toContain("agent.message");
  });

  it("a reconnect on an existing thread gets MESSAGES_SNAPSHOT equal to the history it built", async () => {
    const a = await agent([WEATHER_TOOL]);
    const threadId = `thread-reconnect-${Date.now()}`;
    const first = agUiAgent(t, a.id, threadId);
    say(first, 'call get_weather {"city":"Oslo"}');
    const run = await recordRun(first, { tools: [WEATHER] });
    const callId = (run.finished!.outcome as { pendingToolCallIds: string[] }).pendingToolCallIds[0]!;
    first.addMessage({ id: "tool-oslo", role: "tool", toolCallId: callId, content: "Snow" });
    await recordRun(first, { tools: [WEATHER] });
    say(first, "thanks");
    await recordRun(first);

    const second = agUiAgent(t, a.id, threadId);
    const reconnect = await recordRun(second);
    expect(reconnect.types).toEqual([
      EventType.RUN_STARTED,
      EventType.MESSAGES_SNAPSHOT,
      EventType.RUN_FINISHED,
    ]);
    // A fresh client knows no ids of its own: the tool answer shows under its fact id.
    const expected = first.messages.map((m) => (m.id === "tool-oslo" ? { ...m, id: expect.any(String) } : m));
    expect(second.messages).toEqual(expected);
    expect(second.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("a fresh client's first message on an old thread lands after the history in its list", async () => {
    const a = await agent([]);
    const threadId = `thread-fresh-${Date.now()}`;
    const first = agUiAgent(t, a.id, threadId);
    say(first, "first");
    await recordRun(first);

    // The client merges a snapshot keeping its own order: one holding only its new message would
    // put it before the history unless the server first snapshots the history without it.
    const fresh = agUiAgent(t, a.id, threadId);
    say(fresh, "second");
    await recordRun(fresh);
    const view = fresh.messages.map((m) => [m.role, typeof m.content === "string" ? m.content : ""]);
    expect(view.map(([role]) => role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(view[0]![1]).toBe("first");
    expect(view[2]![1]).toBe("second");
    expect(view[3]![1]).toContain("second");
  });

  it("refused input (state, forwardedProps, an unknown tool) is a RUN_ERROR and writes nothing", async () => {
    const a = await agent([WEATHER_TOOL]);
    const threadId = `thread-refusals-${Date.now()}`;
    const seed = agUiAgent(t, a.id, threadId);
    say(seed, "first");
    await recordRun(seed);
    const sessionId = await sessionOf(a.id);
    const before = await history(t.client, sessionId);

    const withState = agUiAgent(t, a.id, threadId, { initialState: { cart: ["x"] } });
    say(withState, "with state");
    const refusals = [
      await recordRun(withState),
      await recordRun(
        (() => {
          const c = agUiAgent(t, a.id, threadId);
          say(c, "with props");
          return c;
        })(),
        { forwardedProps: { mode: "fast" } },
      ),
      await recordRun(
        (() => {
          const c = agUiAgent(t, a.id, threadId);
          say(c, "with a tool");
          return c;
        })(),
        {
          tools: [WEATHER, { name: "delete_everything", description: "no", parameters: { type: "object" } }],
        },
      ),
    ];
    expect(refusals.map((r) => r.types)).toEqual(Array(3).fill([EventType.RUN_STARTED, EventType.RUN_ERROR]));
    expect(refusals.map((r) => r.runError?.code)).toEqual([
      "state_unsupported",
      "forwarded_props_unsupported",
      "tool_not_defined",
    ]);
    expect(refusals[2]?.runError?.message).toContain("delete_everything");
    await sleep(100);
    expect(await history(t.client, sessionId)).toEqual(before);
  });

  it("the Accept header chooses the framing: a client asking for protobuf gets the protocol's binary frames", async () => {
    const a = await agent();
    const body = JSON.stringify({
      threadId: `thread-proto-${Date.now()}`,
      runId: "run-proto",
      messages: [{ id: "u-proto", role: "user", content: "binary please" }],
    });
    let contentType: string | null = null;
    const request = async () => {
      const response = await fetch(agUiUrl(t, a.id), {
        method: "POST",
        headers: { "content-type": "application/json", accept: AGUI_PROTO, "x-api-key": TEST_API_KEY },
        body,
      });
      contentType = response.headers.get("content-type");
      return response;
    };
    // The official client's own transport reads the frames, choosing its parser by the content type.
    const events = await new Promise<Array<{ type: string; delta?: string }>>((resolve, reject) => {
      const seen: Array<{ type: string; delta?: string }> = [];
      transformHttpEventStream(runHttpRequest(request)).subscribe({
        next: (event) => seen.push(event as never),
        error: reject,
        complete: () => resolve(seen),
      });
    });
    expect(contentType).toBe(AGUI_PROTO);
    expect(events[0]?.type).toBe(EventType.RUN_STARTED);
    expect(events.at(-1)?.type).toBe(EventType.RUN_FINISHED);
    const text = events.flatMap((e) => (e.type === EventType.TEXT_MESSAGE_CONTENT ? [e.delta] : [])).join("");
    expect(text).toBe("[offline model] You said: binary please");
  });

  it("errors before the stream: an unknown agent rejects with HTTP 404; bad JSON and a bad body are 400s", async () => {
    const client = agUiAgent(t, "agent_does_not_exist");
    say(client, "hi");
    // The client logs every rejected run to the console before rethrowing it.
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    await expect(client.runAgent()).rejects.toThrow(/^HTTP 404: .*agent_does_not_exist/);
    quiet.mockRestore();

    const a = await agent();
    const post = (body: string, key = TEST_API_KEY) =>
      fetch(agUiUrl(t, a.id), {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", "x-api-key": key },
        body,
      });
    for (const body of ["{not json", JSON.stringify({ threadId: "t", messages: [] })]) {
      const response = await post(body);
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: { type: string; message: string } };
      expect(json.error).toMatchObject({
        type: "invalid",
        code: "invalid_request",
        message: expect.any(String),
      });
    }
    const unauthenticated = await post(
      JSON.stringify({ threadId: "t", runId: "r", messages: [] }),
      "wrong-key",
    );
    expect(unauthenticated.status).toBe(401);
  });
});
