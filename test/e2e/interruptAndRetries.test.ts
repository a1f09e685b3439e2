import Anthropic from "@anthropic-ai/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  expectApiError,
  history,
  isActionIdle,
  isEndTurnIdle,
  runTurn,
  StreamReader,
  sleep,
  stopReason,
  textOf,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});
afterEach(() => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
});

/** The offline model streams one word per delay; the server runs in this process and reads it per call. */
const DELAY_MS = 15;
const LONG = "please repeat this fairly long sentence back to me slowly word by word";
const LONG_REPLY_MS = (LONG.split(" ").length + 3) * DELAY_MS;

describe("user.interrupt", () => {
  it("interrupting a running turn ends it with end_turn, commits none of its late output, and the session takes new input", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.message"] });
    process.env.AWAKEN_OFFLINE_DELAY_MS = String(DELAY_MS);
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage(LONG)] });
    const firstDelta = await reader.until((e) => e.type === "event_delta");
    const previewId = firstDelta.event_id as string;
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("running");

    const from = reader.events.length;
    const sent = await t.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.interrupt" }],
    });
    const interrupt = sent.data?.[0] as unknown as WireEvent;
    expect(interrupt).toMatchObject({ type: "user.interrupt" });
    const idle = await reader.until((e) => e.type === "session.status_idle", { from });
    expect(stopReason(idle)).toEqual({ type: "end_turn" });
    // The interrupt, then the idle: nothing else. The cut-off model request committed nothing (its
    // span is committed with its answer), so there is no request to close.
    const afterSend = reader.events.slice(from).filter((e) => e.type !== "event_delta");
    expect(afterSend.map((e) => e.type)).toEqual(["user.interrupt", "session.status_idle"]);
    expect(afterSend.map((e) => e.id)).toEqual([interrupt.id, idle.id]);
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");

    // Outlive the interrupted reply: had it kept running it would be complete by now.
    await sleep(Math.min(300, LONG_REPLY_MS + 50));
    const afterInterrupt = await history(t.client, session.id);
    expect(afterInterrupt.some((e) => e.type === "agent.message")).toBe(false);
    expect(afterInterrupt.some((e) => e.id === previewId)).toBe(false);
    expect(afterInterrupt.at(-1)?.id).toBe(idle.id);

    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
    const turn = await runTurn(t.client, reader, session.id, "after the interrupt");
    await reader.close();
    const messages = turn.filter((e) => e.type === "agent.message");
    expect(messages).toHaveLength(1);
    expect(textOf(messages[0])).toMatch(/^\[offline model\] You said: .*after the interrupt$/s);
    expect(isEndTurnIdle(turn.at(-1) as WireEvent)).toBe(true);
    const final = await history(t.client, session.id);
    expect(final.filter((e) => e.type === "agent.message").map((e) => e.id)).toEqual([messages[0]?.id]);
    expect(final.some((e) => e.id === previewId)).toBe(false);
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
  });

  // SDK 1.14 (`BetaManagedAgentsEventStart`) says a request that ends without the previewed event
  // closes the preview with its span.model_request_end. A request's span is committed with its
  // answer here, so an interrupted request has no span at all: the interrupt and the idle that
  // follows it end the turn, and the preview with it (docs/managed-agents-wire.md).
  it("an interrupted model request leaves nothing committed: its previews streamed, the idle follows the interrupt", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.message"] });
    process.env.AWAKEN_OFFLINE_DELAY_MS = String(DELAY_MS);
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage(LONG)] });
    await reader.until((e) => e.type === "event_delta");
    const start = reader.events.find((e) => e.type === "event_start");
    const previewed = (start?.event as { id: string } | undefined)?.id;
    expect(previewed).toMatch(/^sevt_/);
    expect(reader.events.some((e) => e.type.startsWith("span."))).toBe(false);
    const from = reader.events.length;
    await t.client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
    const idle = await reader.until((e) => e.type === "session.status_idle", { from });
    await reader.close();
    const committed = reader.events
      .slice(from, reader.events.indexOf(idle) + 1)
      .filter((e) => e.type !== "event_delta");
    expect(committed.map((e) => e.type)).toEqual(["user.interrupt", "session.status_idle"]);
    const events = await history(t.client, session.id);
    expect(events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "user.interrupt",
      "session.status_idle",
    ]);
    expect(events.some((e) => e.id === previewed)).toBe(false);
  });

  it("interrupting while a custom tool result is awaited clears the pending id; a later result for it is rejected", async () => {
    const { session } = await createSession(t.client, { tools: [WEATHER_TOOL] });
    const reader = await StreamReader.open(t.client, session.id);
    const turn = await runTurn(
      t.client,
      reader,
      session.id,
      'call get_weather {"city":"Rome"}',
      isActionIdle,
    );
    const toolUse = turn.find((e) => e.type === "agent.custom_tool_use") as WireEvent;

    const from = reader.events.length;
    await t.client.beta.sessions.events.send(session.id, { events: [{ type: "user.interrupt" }] });
    const idle = await reader.until((e) => e.type === "session.status_idle", { from });
    expect(stopReason(idle)).toEqual({ type: "end_turn" });

    const before = await history(t.client, session.id);
    await expectApiError(
      t.client.beta.sessions.events.send(session.id, {
        events: [
          {
            type: "user.custom_tool_result",
            custom_tool_use_id: toolUse.id,
            content: [{ type: "text", text: "late" }],
          },
        ],
      }),
      Anthropic.BadRequestError,
      { status: 400, type: "invalid_request_error", message: [toolUse.id, /interrupted/] },
    );
    expect(await history(t.client, session.id)).toEqual(before);

    const next = await runTurn(t.client, reader, session.id, "moving on");
    await reader.close();
    expect(isEndTurnIdle(next.at(-1) as WireEvent)).toBe(true);
    // The model is told the interrupted call failed (a synthetic error result closes the dangling
    // tool_use); the offline model answers a turn that carries tool results by reading them.
    expect(textOf(next.find((e) => e.type === "agent.message"))).toBe(
      "[offline model] Tool result received (error): The user interrupted before this tool returned a result.",
    );
  });

  it("an interrupt on an idle session is recorded and changes no status", async () => {
    const { session } = await createSession(t.client);
    const sent = await t.client.beta.sessions.events.send(session.id, {
      events: [{ type: "user.interrupt" }],
    });
    expect(sent.data?.map((e) => e.type)).toEqual(["user.interrupt"]);
    expect((await history(t.client, session.id)).map((e) => e.type)).toEqual(["user.interrupt"]);
    expect((await t.client.beta.sessions.retrieve(session.id)).status).toBe("idle");
  });

  it("archiving a session mid-turn terminates it, its model request in flight leaving nothing committed", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.message"] });
    process.env.AWAKEN_OFFLINE_DELAY_MS = String(DELAY_MS);
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage(LONG)] });
    await reader.until((e) => e.type === "event_delta");
    await t.client.beta.sessions.archive(session.id);
    await reader.until((e) => e.type === "session.status_terminated");
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;
    // The server closes the stream after session.status_terminated.
    await reader.end();
    const events = await history(t.client, session.id);
    const starts = events.filter((e) => e.type === "span.model_request_start").map((e) => e.id);
    const ends = events
      .filter((e) => e.type === "span.model_request_end")
      .map((e) => (e as unknown as { model_request_start_id: string }).model_request_start_id);
    // The request's span would have been committed with its answer, which the archive fenced out.
    expect(starts).toEqual([]);
    expect(ends).toEqual([]);
    expect(events.at(-1)?.type).toBe("session.status_terminated");
    expect(events.some((e) => e.type === "agent.message")).toBe(false);
  });
});

describe("events.send retries (wire §1.1, §1.4: POSTs are retried without an idempotency key)", () => {
  it("a retry of a send whose first attempt committed but lost its response returns the stored echo: one message, one turn", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const attempts: Array<string | null> = [];
    const flaky = new Anthropic({
      baseURL: t.server.url,
      apiKey: TEST_API_KEY,
      maxRetries: 2,
      fetch: async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        if (init?.method === "POST" && url.endsWith(`/v1/sessions/${session.id}/events`)) {
          attempts.push(new Headers(init.headers).get("x-stainless-retry-count"));
          if (attempts.length === 1) {
            const response = await fetch(input, init);
            await response.text(); // the server committed and answered...
            throw new TypeError("fetch failed: connection reset after the request was sent"); // ...but we never hear it
          }
        }
        return fetch(input, init);
      },
    });

    const sent = await flaky.beta.sessions.events.send(session.id, {
      events: [userMessage("only once please")],
    });
    expect(attempts).toEqual(["0", "1"]);
    const echo = sent.data as unknown as WireEvent[];
    expect(echo.map((e) => e.type)).toEqual(["user.message"]);
    await reader.until(isEndTurnIdle);
    await sleep(100); // a duplicate turn, had one been queued, would be running by now
    await reader.close();

    const events = await history(t.client, session.id);
    const messages = events.filter((e) => e.type === "user.message");
    expect(messages).toHaveLength(1);
    expect(messages[0]).toEqual(echo[0]);
    expect(events.filter((e) => e.type === "session.status_running")).toHaveLength(1);
    expect(events.filter((e) => e.type === "agent.message")).toHaveLength(1);
    expect(reader.events.map((e) => e.id)).toEqual(events.map((e) => e.id));
  });

  it("a first attempt (retry count 0) of an identical message is new input: two messages, two turns", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const first = await runTurn(t.client, reader, session.id, "same words");
    const second = await runTurn(t.client, reader, session.id, "same words");
    await reader.close();
    expect(first[0]?.id).not.toBe(second[0]?.id);
    const events = await history(t.client, session.id);
    expect(events.filter((e) => e.type === "user.message").map((e) => e.id)).toEqual([
      first[0]?.id,
      second[0]?.id,
    ]);
    expect(events.filter((e) => e.type === "session.status_running")).toHaveLength(2);
    expect(events.filter(isEndTurnIdle)).toHaveLength(2);
  });

  it("a retry whose body differs from the most recent send is new input", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    await runTurn(t.client, reader, session.id, "first words");
    const retried = await t.client.beta.sessions.events.send(
      session.id,
      { events: [userMessage("other words")] },
      { headers: { "X-Stainless-Retry-Count": "1" } },
    );
    const echo = await reader.until((e) => e.id === retried.data?.[0]?.id);
    await reader.until(isEndTurnIdle, { from: reader.events.indexOf(echo) });
    await reader.close();
    const messages = (await history(t.client, session.id)).filter((e) => e.type === "user.message");
    expect(messages.map(textOf)).toEqual(["first words", "other words"]);
  });
  it("an Idempotency-Key header deduplicates exactly: same key returns the echo, a new key is new input", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const send = (key: string) =>
      t.client.beta.sessions.events.send(
        session.id,
        { events: [userMessage("keyed")] },
        { headers: { "Idempotency-Key": key } },
      );
    const first = await send("k-1");
    await reader.until(isEndTurnIdle);
    const again = await send("k-1");
    expect(again.data?.map((e) => e.id)).toEqual(first.data?.map((e) => e.id));
    const fresh = await send("k-2");
    expect(fresh.data?.[0]?.id).not.toBe(first.data?.[0]?.id);
    const freshEcho = await reader.until((e) => e.id === fresh.data?.[0]?.id);
    await reader.until(isEndTurnIdle, { from: reader.events.indexOf(freshEcho) });
    await reader.close();
    const messages = (await history(t.client, session.id)).filter((e) => e.type === "user.message");
    expect(messages.map((m) => m.id)).toEqual([first.data?.[0]?.id, fresh.data?.[0]?.id]);
  });
});
