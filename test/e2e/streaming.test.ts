import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  history,
  isEndTurnIdle,
  runTurn,
  StreamReader,
  sleep,
  textOf,
  userMessage,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const PING_MS = 100;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ ssePingMs: PING_MS });
});
afterAll(async () => {
  await t.close();
});

const SAID = "stream these words back to me one by one please";

describe("session event stream (wire §1.6, §3.2 deltas)", () => {
  it("event_deltas[]=agent.message previews the message: event_start, text deltas, then the final message with the same id", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.message"] });
    const turn = await runTurn(t.client, reader, session.id, SAID);
    await reader.close();

    const start = turn.find((e) => e.type === "event_start") as WireEvent;
    expect(start).toBeDefined();
    const previewed = start.event as { id: string; type: string };
    expect(previewed.type).toBe("agent.message");
    const deltas = turn.filter((e) => e.type === "event_delta");
    expect(deltas.length).toBeGreaterThan(1);
    for (const delta of deltas) {
      expect(delta.event_id).toBe(previewed.id);
      expect(delta.delta).toMatchObject({ type: "content_delta", content: { type: "text" } });
    }
    const message = turn.find((e) => e.type === "agent.message") as WireEvent;
    expect(message.id).toBe(previewed.id);
    const joined = deltas.map((d) => (d.delta as { content: { text: string } }).content.text).join("");
    expect(joined).toBe(textOf(message));
    expect(textOf(message)).toBe(`[offline model] You said: ${SAID}`);
    // Order: start, then every delta, then the authoritative message.
    const index = (e: WireEvent) => turn.indexOf(e);
    expect(index(start)).toBeLessThan(index(deltas[0] as WireEvent));
    expect(index(deltas.at(-1) as WireEvent)).toBeLessThan(index(message));
  });

  it("a stream without event_deltas receives no previews, and previews never reach events.list", async () => {
    const { session } = await createSession(t.client);
    const plain = await StreamReader.open(t.client, session.id);
    const withDeltas = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.message"] });
    await runTurn(t.client, plain, session.id, SAID);
    await withDeltas.until(isEndTurnIdle);
    await plain.close();
    await withDeltas.close();

    const previewTypes = new Set(["event_start", "event_delta"]);
    expect(plain.events.some((e) => previewTypes.has(e.type))).toBe(false);
    expect(withDeltas.events.some((e) => e.type === "event_delta")).toBe(true);
    const events = await history(t.client, session.id);
    expect(events.some((e) => previewTypes.has(e.type))).toBe(false);
    // Both connections carry the same committed events, and so does the history.
    const committed = withDeltas.events.filter((e) => !previewTypes.has(e.type)).map((e) => e.id);
    expect(plain.events.map((e) => e.id)).toEqual(committed);
    expect(events.map((e) => e.id)).toEqual(committed);
  });

  it("event_deltas[]=agent.thinking alone sends no agent.message deltas", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.thinking"] });
    await runTurn(t.client, reader, session.id, SAID);
    await reader.close();
    expect(reader.events.some((e) => e.type === "event_start" || e.type === "event_delta")).toBe(false);
  });

  it("a stream opened after a turn finished replays nothing: it is a live tail", async () => {
    const { session } = await createSession(t.client);
    const first = await StreamReader.open(t.client, session.id);
    await runTurn(t.client, first, session.id, "first turn");
    await first.close();

    const late = await StreamReader.open(t.client, session.id, { event_deltas: ["agent.message"] });
    await sleep(250);
    expect(late.events).toEqual([]);
    const turn = await runTurn(t.client, late, session.id, "second turn");
    await late.close();
    expect(late.events[0]?.type).toBe("user.message");
    expect(textOf(late.events[0])).toBe("second turn");
    expect(late.events.filter((e) => e.type === "session.status_idle")).toHaveLength(1);
    expect(turn.at(-1)?.type).toBe("session.status_idle");
  });

  it("keep-alive pings arrive and every SSE message names its event", async () => {
    const { session } = await createSession(t.client);
    const controller = new AbortController();
    const response = await fetch(`${t.server.url}/v1/sessions/${session.id}/events/stream`, {
      headers: {
        authorization: `Bearer ${TEST_API_KEY}`,
        "anthropic-beta": "managed-agents-2026-04-01",
        accept: "application/json",
      },
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(response.headers.get("request-id")).toMatch(/^req_/);

    const body = response.body as ReadableStream<Uint8Array>;
    const chunks = body.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const read = async (enough: (text: string) => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!enough(text) && Date.now() < deadline) {
        const { value, done } = await chunks.read();
        if (done) break;
        text += value;
      }
    };
    await read((s) => (s.match(/event: ping\n/g) ?? []).length >= 2);
    await t.client.beta.sessions.events.send(session.id, { events: [userMessage("framing")] });
    await read((s) => s.includes("event: session.status_idle\n") && s.endsWith("\n\n"));
    controller.abort();

    expect((text.match(/event: ping\n/g) ?? []).length).toBeGreaterThanOrEqual(2);
    const messages = text.split("\n\n").filter((m) => m.trim() !== "");
    for (const message of messages) {
      const lines = message.split("\n");
      const event = lines.find((l) => l.startsWith("event: "));
      const data = lines.filter((l) => l.startsWith("data: "));
      expect(event, `message without an event: line: ${message}`).toBeDefined();
      expect(data).toHaveLength(1);
      const payload = JSON.parse((data[0] as string).slice("data: ".length)) as { type: string };
      if (event !== "event: ping") expect(event).toBe(`event: ${payload.type}`);
    }
    const named = messages.map((m) => m.split("\n")[0]?.slice("event: ".length));
    expect(named).toContain("user.message");
    expect(named).toContain("agent.message");
  });

  it("session.deleted closes the stream: the SDK iteration ends", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    await runTurn(t.client, reader, session.id, "about to be deleted");
    const deleted = await t.client.beta.sessions.delete(session.id);
    expect(deleted).toMatchObject({ id: session.id, type: "session_deleted" });
    await reader.end();
    expect(reader.error).toBeNull();
    expect(reader.events.at(-1)?.type).toBe("session.deleted");
  });

  it("archiving a session emits session.status_terminated and closes the stream", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    await t.client.beta.sessions.archive(session.id);
    await reader.end();
    expect(reader.events.map((e) => e.type)).toEqual(["session.status_terminated"]);
  });

  it("session.usage events and the session's usage report cumulative usage in the SDK's shape", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    const first = await runTurn(t.client, reader, session.id, "count my tokens");
    const second = await runTurn(t.client, reader, session.id, "and these too");
    await reader.close();
    const usageOf = (turn: WireEvent[]) =>
      turn.find((e) => e.type === "session.usage")?.usage as Record<string, unknown>;
    const sdkShape = {
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
    };
    for (const usage of [usageOf(first), usageOf(second)]) {
      expect(usage).toMatchObject(sdkShape);
      expect(usage.input_tokens).toBeGreaterThan(0);
    }
    expect(usageOf(second).output_tokens).toBeGreaterThan(usageOf(first).output_tokens as number);
    const retrieved = await t.client.beta.sessions.retrieve(session.id);
    // The event is a point-in-time snapshot (the SDK's words) taken as the answer is committed:
    // tokens and cost are final there, while the running time still grows until the idle lands.
    const { active_seconds: snapshotSeconds, ...counted } = usageOf(second);
    expect(retrieved.usage).toMatchObject(counted);
    expect(retrieved.usage?.active_seconds).toBeGreaterThanOrEqual(snapshotSeconds as number);
    expect(retrieved.stats?.active_seconds).toBe(retrieved.usage?.active_seconds);
  });

  it("streaming a session that does not exist is a JSON 404, not an event stream", async () => {
    const response = await fetch(`${t.server.url}/v1/sessions/sesn_missing/events/stream`, {
      headers: { authorization: `Bearer ${TEST_API_KEY}` },
    });
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await response.json()) as { error: { type: string } };
    expect(body.error.type).toBe("not_found_error");
  });
});
