import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startFakeOpenAI } from "../support/fakeOpenAIServer.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// A gpt-* agent on the real server, whose OpenAI provider talks to the fake chat completions API.

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
  fake = await startFakeOpenAI();
  t = await startTestServer({ env: { OPENAI_API_KEY: "ok", OPENAI_BASE_URL: fake.url } });
  client = t.client;
  environmentId = (await client.beta.environments.create({ name: "openai-e2e" })).id;
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

async function newSession(): Promise<string> {
  const agent = await client.beta.agents.create({
    name: "GPT on the fake",
    model: "gpt-4o-mini",
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

type WireMessage = Record<string, unknown> & { role: string };
const messagesOf = (index: number) => fake.requests[index]?.body.messages as WireMessage[];

describe("a gpt-* agent on the OpenAI wire", () => {
  it("runs a text turn: spans, message, usage and the request the model received", async () => {
    const sessionId = await newSession();
    const before = fake.requests.length;
    fake.enqueue({
      kind: "text",
      text: "Hello from the fake GPT.",
      usage: { input_tokens: 31, output_tokens: 6 },
    });
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
    expect(start).toMatchObject({ provider: "openai", model: "gpt-4o-mini" });
    expect(ofType(events, "agent.message")[0]?.content).toEqual([
      { type: "text", text: "Hello from the fake GPT." },
    ]);
    const usage = {
      input_tokens: 31,
      output_tokens: 6,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    expect(ofType(events, "span.model_request_end")[0]).toMatchObject({
      model_request_start_id: start?.id,
      is_error: false,
      provider: "openai",
      model_usage: usage,
    });
    expect(ofType(events, "session.usage")[0]?.usage).toMatchObject(usage);
    expect(idles(events)[0]?.stop_reason).toEqual({ type: "end_turn" });

    const session = await client.beta.sessions.retrieve(sessionId);
    expect(session.status).toBe("idle");
    expect(session.usage).toMatchObject({ input_tokens: 31, output_tokens: 6, cache_read_input_tokens: 0 });

    expect(fake.requests.length).toBe(before + 1);
    const request = fake.requests[before];
    expect(request?.headers.authorization).toBe("Bearer ok");
    expect(request?.body).toMatchObject({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(request?.body.messages).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: "hello there" },
    ]);
    expect(request?.body.tools).toEqual([
      {
        type: "function",
        function: {
          name: WEATHER_TOOL.name,
          description: WEATHER_TOOL.description,
          parameters: WEATHER_TOOL.input_schema,
        },
      },
    ]);

    fake.enqueue({ kind: "text", text: "Again.", usage: { input_tokens: 100, output_tokens: 4 } });
    await say(sessionId, "once more");
    const after = await waitForHistory(sessionId, untilIdles(2));
    expect(ofType(after, "session.usage")[1]?.usage).toMatchObject({ input_tokens: 131, output_tokens: 10 });
    const retrieved = await client.beta.sessions.retrieve(sessionId);
    expect(retrieved.usage).toMatchObject({ input_tokens: 131, output_tokens: 10 });
  });

  it("turns tool calls into agent.custom_tool_use and sends results back as tool messages", async () => {
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
    expect(second).toHaveLength(4);
    expect(second.slice(0, 2)).toEqual([
      { role: "system", content: SYSTEM },
      { role: "user", content: "What is the weather in Paris?" },
    ]);
    const assistant = second[2] as {
      role: string;
      content: unknown;
      tool_calls: Array<Record<string, unknown>>;
    };
    expect(assistant.role).toBe("assistant");
    expect(assistant.content).toBe("Let me check.");
    expect(assistant.tool_calls).toHaveLength(1);
    const call = assistant.tool_calls[0] as {
      id: string;
      type: string;
      function: { name: string; arguments: string };
    };
    expect(call.type).toBe("function");
    expect(call.function.name).toBe("lookup_weather");
    expect(JSON.parse(call.function.arguments)).toEqual({ city: "Paris" });
    expect(second[3]).toEqual({ role: "tool", tool_call_id: call.id, content: "sunny, 21C" });
  });

  it("sends an error tool result as an Error: tool message", async () => {
    const sessionId = await newSession();
    const before = fake.requests.length;
    fake.enqueue(
      { kind: "tool_use", name: "lookup_weather", input: { city: "Atlantis" } },
      { kind: "text", text: "I could not find that city." },
    );
    await say(sessionId, "Weather in Atlantis?");
    const waiting = await waitForHistory(sessionId, untilIdles(1));
    const [toolUse] = ofType(waiting, "agent.custom_tool_use");
    expect(ofType(waiting, "agent.message")).toHaveLength(0);
    await client.beta.sessions.events.send(sessionId, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: toolUse?.id as string,
          content: [{ type: "text", text: "unknown city" }],
          is_error: true,
        },
      ],
    });
    await waitForHistory(sessionId, untilIdles(2));
    const second = messagesOf(before + 1);
    const assistant = second[2] as { role: string; content: unknown; tool_calls: Array<{ id: string }> };
    expect(assistant.content).toBeNull();
    expect(second[3]).toEqual({
      role: "tool",
      tool_call_id: assistant.tool_calls[0]?.id,
      content: "Error: unknown city",
    });
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
      { role: "system", content: SYSTEM },
      { role: "user", content: "first question" },
      { role: "assistant", content: "fake: first question" },
      { role: "user", content: "second question" },
    ]);
  });
});
