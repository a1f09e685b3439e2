import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  expectApiError,
  history,
  isActionIdle,
  isEndTurnIdle,
  StreamReader,
  stopReason,
  textOf,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const weatherTool = (calls: unknown[]) =>
  betaTool({
    name: "get_weather",
    description: WEATHER_TOOL.description,
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    run: (input) => {
      calls.push(input);
      return `Sunny in ${input.city}`;
    },
  });

/** Drives a session to a pending `agent.custom_tool_use` and returns it with its idle. */
async function pendingToolUse(client: Anthropic) {
  const { session } = await createSession(client, { tools: [WEATHER_TOOL] });
  const reader = await StreamReader.open(client, session.id);
  await client.beta.sessions.events.send(session.id, {
    events: [userMessage('call get_weather {"city":"Paris"}')],
  });
  const idle = await reader.until((e) => e.type === "session.status_idle");
  const toolUse = reader.events.find((e) => e.type === "agent.custom_tool_use") as WireEvent;
  return { session, reader, idle, toolUse };
}

describe("custom tool round trip through the official SDK", () => {
  it("a custom tool call parks the session on requires_action naming the tool-use event", async () => {
    const { session, reader, idle, toolUse } = await pendingToolUse(t.client);
    await reader.close();

    expect(reader.events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "agent.custom_tool_use",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    expect(toolUse).toMatchObject({ name: "get_weather", input: { city: "Paris" } });
    expect(toolUse.id).toMatch(/^sevt_/);
    expect(stopReason(idle)).toEqual({ type: "requires_action", event_ids: [toolUse.id] });
    expect(idle.stop_details).toBeNull();
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
  });

  it("the SDK's session tool runner answers the call and the turn ends with the model reading the result", async () => {
    const { session, reader, toolUse } = await pendingToolUse(t.client);
    const calls: unknown[] = [];
    const runner = t.client.beta.sessions.events.toolRunner(session.id, {
      tools: [weatherTool(calls)],
      maxIdleMs: 200,
    });
    const dispatched = [];
    for await (const call of runner) dispatched.push(call);
    await reader.until(isEndTurnIdle);
    await reader.close();

    expect(calls).toEqual([{ city: "Paris" }]);
    expect(dispatched).toHaveLength(1);
    expect(dispatched[0]).toMatchObject({
      toolUseId: toolUse.id,
      name: "get_weather",
      isError: false,
      posted: true,
    });

    const events = await history(t.client, session.id);
    const results = events.filter((e) => e.type === "user.custom_tool_result");
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      custom_tool_use_id: toolUse.id,
      is_error: false,
      content: [{ type: "text", text: "Sunny in Paris" }],
    });
    const messages = events.filter((e) => e.type === "agent.message");
    expect(textOf(messages.at(-1))).toBe("[offline model] Tool result received: Sunny in Paris");
    const afterResult = events.slice(events.indexOf(results[0] as WireEvent));
    expect(afterResult.map((e) => e.type)).toEqual([
      "user.custom_tool_result",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    expect(isEndTurnIdle(events.at(-1) as WireEvent)).toBe(true);
    // The history the runner read and the live stream agree on ids and order.
    expect(reader.events.map((e) => e.id)).toEqual(
      events.slice(events.findIndex((e) => e.type === "user.message")).map((e) => e.id),
    );
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
  });

  it("a user.custom_tool_result is echoed with a server id and resumes the run", async () => {
    const { session, reader, toolUse } = await pendingToolUse(t.client);
    const from = reader.events.length;
    const sent = await t.client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUse.id,
          content: [{ type: "text", text: "Rain" }],
        },
      ],
    });
    const echo = sent.data?.[0] as unknown as WireEvent;
    expect(echo).toMatchObject({ type: "user.custom_tool_result", custom_tool_use_id: toolUse.id });
    expect(echo.id).toMatch(/^sevt_/);
    expect(typeof echo.processed_at).toBe("string");
    const streamed = await reader.until((e) => e.id === echo.id, { from });
    expect(streamed).toEqual(echo);
    const last = await reader.until(isEndTurnIdle, { from });
    const message = reader.events
      .slice(from, reader.events.indexOf(last))
      .find((e) => e.type === "agent.message");
    expect(textOf(message)).toBe("[offline model] Tool result received: Rain");
    await reader.close();
  });

  it("a second user.custom_tool_result for an answered id is rejected and changes nothing", async () => {
    const { session, reader, toolUse } = await pendingToolUse(t.client);
    const result = {
      type: "user.custom_tool_result" as const,
      custom_tool_use_id: toolUse.id,
      content: [{ type: "text" as const, text: "Sunny" }],
    };
    await t.client.beta.sessions.events.send(session.id, { events: [result] });
    await reader.until(isEndTurnIdle);
    await reader.close();
    const before = await history(t.client, session.id);
    const sessionBefore = await t.client.beta.sessions.retrieve(session.id);

    const error = await expectApiError(
      t.client.beta.sessions.events.send(session.id, { events: [result] }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: [toolUse.id, /already answered/] },
    );
    expect(error.headers?.get("x-should-retry")).toBe("false");

    expect(await history(t.client, session.id)).toEqual(before);
    const sessionAfter = await t.client.beta.sessions.retrieve(session.id);
    expect(sessionAfter.updated_at).toBe(sessionBefore.updated_at);
    expect(sessionAfter.status).toBe("idle");
  });

  it("a user.custom_tool_result for an unknown id is rejected and leaves the call pending", async () => {
    const { session, reader, toolUse } = await pendingToolUse(t.client);
    await reader.close();
    const before = await history(t.client, session.id);

    await expectApiError(
      t.client.beta.sessions.events.send(session.id, {
        events: [{ type: "user.custom_tool_result", custom_tool_use_id: "sevt_unknown", content: [] }],
      }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: [/content/] },
    );
    await expectApiError(
      t.client.beta.sessions.events.send(session.id, {
        events: [
          {
            type: "user.custom_tool_result",
            custom_tool_use_id: "sevt_unknown",
            content: [{ type: "text", text: "x" }],
          },
        ],
      }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: ["sevt_unknown", /not waiting/] },
    );
    expect(await history(t.client, session.id)).toEqual(before);

    // The real call is still answerable afterwards.
    const ok = await t.client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUse.id,
          content: [{ type: "text", text: "ok" }],
        },
      ],
    });
    expect(ok.data).toHaveLength(1);
  });

  it("the runner posts nothing for a tool it does not own, leaving the id pending", async () => {
    const { session, reader, toolUse } = await pendingToolUse(t.client);
    await reader.close();
    const other = betaTool({
      name: "something_else",
      description: "not the requested tool",
      inputSchema: { type: "object", properties: {} },
      run: () => "never",
    });
    const dispatched = [];
    const controller = new AbortController();
    const runner = t.client.beta.sessions.events.toolRunner(session.id, {
      tools: [other],
      maxIdleMs: 0,
      signal: controller.signal,
    });
    const stop = setTimeout(() => controller.abort(), 300);
    for await (const call of runner) dispatched.push(call);
    clearTimeout(stop);
    expect(dispatched.every((call) => !call.posted)).toBe(true);
    const events = await history(t.client, session.id);
    expect(events.some((e) => e.type === "user.custom_tool_result")).toBe(false);
    expect(isActionIdle(events.at(-1) as WireEvent)).toBe(true);
    expect(stopReason(events.at(-1))?.event_ids).toEqual([toolUse.id]);
  });
});
