import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// A claude-* agent on the real server, whose Anthropic provider talks to the fake Messages API.

type Ev = { id: string; type: string } & Record<string, unknown>;

let fake: FakeModelServer;
let t: TestServer;
let client: Anthropic;
let environmentId: string;

const SYSTEM = "You are a careful assistant. Answer briefly.";
const WEATHER_TOOL = {
  type: "custom" as const,
  name: "lookup_weather",
  description: "Current weather for a city.",
  input_schema: {
    type: "object" as const,
    properties: { city: { type: "string", description: "City name" } },
    required: ["city"],
  },
};

beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({ env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
  client = t.client;
  environmentId = (await client.beta.environments.create({ name: "anthropic-e2e" })).id;
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function newSession(): Promise<string> {
  const agent = await client.beta.agents.create({
    name: "Claude on the fake",
    model: "claude-sonnet-4-6",
    system: SYSTEM,
    tools: [WEATHER_TOOL],
  });
  return (await client.beta.sessions.create({ agent: agent.id, environment_id: environmentId })).id;
}

async function history(sessionId: string): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const event of client.beta.sessions.events.list(sessionId)) events.push(event as unknown as Ev);
  return events;
}

/** Polls the committed history until `done` holds; the server commits every step it takes. */
async function waitForHistory(sessionId: string, done: (events: Ev[]) => boolean): Promise<Ev[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = await history(sessionId);
    if (done(events)) return events;
    if (Date.now() > deadline) {
      throw new Error(`history never matched: ${events.map((e) => e.type).join(", ")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

const idles = (events: Ev[]) => events.filter((e) => e.type === "session.status_idle");
const untilIdles = (count: number) => (events: Ev[]) => idles(events).length >= count;
const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);

async function say(sessionId: string, text: string): Promise<void> {
  await client.beta.sessions.events.send(sessionId, {
    events: [{ type: "user.message", content: [{ type: "text", text }] }],
  });
}

type Block = Record<string, unknown>;
type WireMessage = { role: string; content: Block[] };
const messagesOf = (index: number) => fake.requests[index]?.body.messages as WireMessage[];

describe("a claude-* agent on the Anthropic wire", () => {
  it("runs a text turn: spans, message, usage and the request the model received", async () => {
    const sessionId = await newSession();
    const before = fake.requests.length;
    const usage = {
      input_tokens: 42,
      output_tokens: 7,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 2,
    };
    fake.enqueue({ kind: "text", text: "Hello from the fake Claude.", usage });
    await say(sessionId, "hello there");
    const events = await waitForHistory(sessionId, untilIdles(1));

    expect(events.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    const [start] = ofType(events, "span.model_request_start");
    expect(start).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-6" });
    expect(ofType(events, "agent.message")[0]?.content).toEqual([
      { type: "text", text: "Hello from the fake Claude." },
    ]);
    expect(ofType(events, "span.model_request_end")[0]).toMatchObject({
      model_request_start_id: start?.id,
      is_error: false,
      provider: "anthropic",
      model_usage: usage,
    });
    expect(ofType(events, "session.usage")[0]?.usage).toMatchObject(usage);
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });

    const session = await client.beta.sessions.retrieve(sessionId);
    expect(session.status).toBe("idle");
    expect(session.usage).toMatchObject({ input_tokens: 42, output_tokens: 7, cache_read_input_tokens: 3 });

    expect(fake.requests.length).toBe(before + 1);
    const request = fake.requests[before];
    // This SDK version sends the key as a bearer token.
    expect(request?.headers.authorization).toBe("Bearer k");
    expect(request?.body).toMatchObject({ model: "claude-sonnet-4-6", stream: true, system: SYSTEM });
    expect(request?.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "hello there" }] },
    ]);
    expect(request?.body.tools).toEqual([
      {
        name: WEATHER_TOOL.name,
        description: WEATHER_TOOL.description,
        input_schema: WEATHER_TOOL.input_schema,
      },
    ]);

    // A second turn adds up in the session usage.
    fake.enqueue({ kind: "text", text: "Again.", usage: { input_tokens: 100, output_tokens: 5 } });
    await say(sessionId, "once more");
    const after = await waitForHistory(sessionId, untilIdles(2));
    expect(ofType(after, "session.usage")[1]?.usage).toMatchObject({
      input_tokens: 142,
      output_tokens: 12,
      cache_read_input_tokens: 3,
    });
    const retrieved = await client.beta.sessions.retrieve(sessionId);
    expect(retrieved.usage).toMatchObject({
      input_tokens: 142,
      output_tokens: 12,
      cache_read_input_tokens: 3,
    });
  });

  it("streams the answer as deltas that add up to the committed agent.message with the same id", async () => {
    const sessionId = await newSession();
    const text = "Deltas arrive word by word, then the message.";
    fake.enqueue({ kind: "text", text });
    const stream = await client.beta.sessions.events.stream(sessionId, { event_deltas: ["agent.message"] });
    await say(sessionId, "stream please");
    const seen: Ev[] = [];
    for await (const event of stream) {
      seen.push(event as unknown as Ev);
      if (event.type === "session.status_idle") break;
    }
    const start = seen.find((e) => e.type === "event_start") as Ev & { event: { id: string; type: string } };
    expect(start.event.type).toBe("agent.message");
    const deltas = seen.filter((e) => e.type === "event_delta") as Array<
      Ev & { event_id: string; delta: { content: { text: string }; index: number } }
    >;
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.every((d) => d.event_id === start.event.id && d.delta.index === 0)).toBe(true);
    expect(deltas.map((d) => d.delta.content.text).join("")).toBe(text);
    const message = seen.find((e) => e.type === "agent.message");
    expect(message?.id).toBe(start.event.id);
    expect(message?.content).toEqual([{ type: "text", text }]);
    expect(seen.indexOf(start)).toBeLessThan(seen.indexOf(deltas[0] as Ev));
    expect(seen.indexOf(deltas.at(-1) as Ev)).toBeLessThan(seen.indexOf(message as Ev));
  });

  it("makes a custom tool round trip through the client", async () => {
    const sessionId = await newSession();
    const before = fake.requests.length;
    fake.enqueue(
      { kind: "tool_use", name: "lookup_weather", input: { city: "Paris" }, text: "Let me check." },
      { kind: "text", text: "It is sunny in Paris." },
    );
    await say(sessionId, "What is the weather in Paris?");
    const waiting = await waitForHistory(sessionId, untilIdles(1));
    expect(waiting.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "agent.custom_tool_use",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    const [toolUse] = ofType(waiting, "agent.custom_tool_use");
    expect(toolUse).toMatchObject({ name: "lookup_weather", input: { city: "Paris" } });
    expect(idles(waiting)[0]?.stop_reason).toEqual({ type: "requires_action", event_ids: [toolUse?.id] });
    expect((await client.beta.sessions.retrieve(sessionId)).status).toBe("idle");

    await client.beta.sessions.events.send(sessionId, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUse?.id as string,
          content: [{ type: "text", text: "sunny, 21C" }],
        },
      ],
    });
    const done = await waitForHistory(sessionId, untilIdles(2));
    expect(done.slice(waiting.length).map((e) => e.type)).toEqual([
      "user.custom_tool_result",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    expect(idles(done)[1]?.stop_reason).toEqual({ type: "end_turn" });
    expect(ofType(done, "agent.message")[1]?.content).toEqual([
      { type: "text", text: "It is sunny in Paris." },
    ]);

    expect(fake.requests.length).toBe(before + 2);
    const second = messagesOf(before + 1);
    expect(second).toHaveLength(3);
    expect(second[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: "What is the weather in Paris?" }],
    });
    expect(second[1]?.role).toBe("assistant");
    expect(second[1]?.content[0]).toEqual({ type: "text", text: "Let me check." });
    const use = second[1]?.content[1];
    expect(use).toMatchObject({ type: "tool_use", name: "lookup_weather", input: { city: "Paris" } });
    expect(second[2]).toEqual({
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: use?.id,
          content: [{ type: "text", text: "sunny, 21C" }],
          is_error: false,
        },
      ],
    });
    expect(typeof use?.id).toBe("string");
  });

  it("carries the earlier exchange into the next turn", async () => {
    const sessionId = await newSession();
    const before = fake.requests.length;
    await say(sessionId, "first question");
    await waitForHistory(sessionId, untilIdles(1));
    await say(sessionId, "second question");
    const events = await waitForHistory(sessionId, untilIdles(2));
    expect(ofType(events, "agent.message").map((e) => e.content)).toEqual([
      [{ type: "text", text: "fake: first question" }],
      [{ type: "text", text: "fake: second question" }],
    ]);
    expect(messagesOf(before + 1)).toEqual([
      { role: "user", content: [{ type: "text", text: "first question" }] },
      { role: "assistant", content: [{ type: "text", text: "fake: first question" }] },
      { role: "user", content: [{ type: "text", text: "second question" }] },
    ]);
  });

  it("answers a message sent while the model was answering, after the answer it interrupted", async () => {
    const sessionId = await newSession();
    const before = fake.requests.length;
    fake.enqueue({ kind: "text", text: "a slow first answer with several words", chunkDelayMs: 40 });
    await say(sessionId, "first");
    await fake.waitForRequests(before + 1);
    await say(sessionId, "second, sent mid-answer");
    const events = await waitForHistory(
      sessionId,
      (evs) => ofType(evs, "agent.message").length >= 2 && idles(evs).length >= 1,
    );
    expect(idles(events)).toHaveLength(1);
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });
    expect(events.at(-1)?.type).toBe("session.status_idle");
    expect(ofType(events, "agent.message").map((e) => e.content)).toEqual([
      [{ type: "text", text: "a slow first answer with several words" }],
      [{ type: "text", text: "fake: second, sent mid-answer" }],
    ]);
    // The model sees the conversation in the order it happened to it: the first answer answered
    // only the first message.
    expect(messagesOf(before + 1)).toEqual([
      { role: "user", content: [{ type: "text", text: "first" }] },
      { role: "assistant", content: [{ type: "text", text: "a slow first answer with several words" }] },
      { role: "user", content: [{ type: "text", text: "second, sent mid-answer" }] },
    ]);
  });
});
