import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAnthropicProvider } from "../../src/providers/anthropicProvider.js";
import { AnthropicStreamAccumulator } from "../../src/providers/anthropicStream.js";
import {
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  ProviderError,
} from "../../src/providers/ports.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";

let fake: FakeModelServer;
let provider: ModelProvider;

beforeEach(async () => {
  fake = await startFakeAnthropic();
  provider = createAnthropicProvider({ apiKey: "sk-ant-test", baseURL: fake.url });
});

afterEach(async () => {
  await fake.close();
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "claude-sonnet-4-6",
    system: "You are terse.",
    messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }],
    tools: [],
    maxTokens: 1024,
    ...overrides,
  };
}

async function complete(req: ModelRequest = request(), signal = new AbortController().signal) {
  const events: ModelStreamEvent[] = [];
  const response = await provider.complete(req, { signal, onEvent: (event) => events.push(event) });
  return { response, events };
}

async function failure(req: ModelRequest = request(), signal?: AbortSignal): Promise<ProviderError> {
  const error = await complete(req, signal).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe("anthropic provider: streaming", () => {
  it("streamed text deltas reach onEvent in order and the final content is their concatenation", async () => {
    fake.enqueue({ kind: "text", text: "The quick brown fox jumps over the lazy dog." });
    const { response, events } = await complete();
    expect(events.length).toBeGreaterThan(3);
    expect(events.every((event) => event.type === "text_delta" && event.index === 0)).toBe(true);
    const joined = textOf(events);
    expect(joined).toBe("The quick brown fox jumps over the lazy dog.");
    expect(response.content).toEqual([{ type: "text", text: joined }]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("a tool_use block with fragmented JSON input is parsed and follows the text block in order", async () => {
    const input = { city: "Paris", days: 3, units: { temperature: "celsius" }, tags: ["a", "b"] };
    fake.enqueue({ kind: "tool_use", name: "get_weather", input, id: "toolu_123", text: "Let me check." });
    const { response, events } = await complete();
    expect(response.content).toEqual([
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_123", name: "get_weather", input },
    ]);
    expect(response.stopReason).toBe("tool_use");
    expect(events.map((event) => event.index)).toEqual(events.map(() => 0));
  });

  it("a tool_use block without preceding text is the only content block", async () => {
    fake.enqueue({ kind: "tool_use", name: "noop", input: {} });
    const { response, events } = await complete();
    expect(events.filter((event) => event.type === "text_delta")).toEqual([]);
    expect(response.content).toEqual([{ type: "tool_use", id: expect.any(String), name: "noop", input: {} }]);
  });
});

describe("anthropic provider: tool-input and thinking deltas", () => {
  it("each tool use opens with its name and wire id, numbered among the tool uses, and its deltas spell the input", async () => {
    const first = { city: "Paris", days: 3, units: { temperature: "celsius" } };
    const second = { q: "weather in Lyon" };
    fake.enqueue({
      kind: "tool_use",
      name: "get_weather",
      input: first,
      id: "toolu_123",
      text: "Checking both.",
      more: [{ name: "search", input: second }],
    });
    const { response, events } = await complete();
    const starts = events.filter((event) => event.type === "tool_input_start");
    expect(starts).toEqual([
      { type: "tool_input_start", index: 0, id: "toolu_123", name: "get_weather" },
      { type: "tool_input_start", index: 1, id: expect.stringMatching(/^toolu_fake_/), name: "search" },
    ]);
    expect(inputOf(events, 0)).toBe(JSON.stringify(first));
    expect(inputOf(events, 1)).toBe(JSON.stringify(second));
    // The wire's empty opening fragment previews nothing.
    expect(events.some((event) => event.type === "tool_input_delta" && event.partialJson === "")).toBe(false);
    // A tool use's start comes before its deltas, and the numbering matches the returned tool uses.
    expect(events.findIndex((e) => e.type === "tool_input_start" && e.index === 1)).toBeLessThan(
      events.findIndex((e) => e.type === "tool_input_delta" && e.index === 1),
    );
    const toolUses = response.content.filter((block) => block.type === "tool_use");
    expect(toolUses.map((block) => block.name)).toEqual(["get_weather", "search"]);
    expect(toolUses[1]?.id).toBe(starts[1]?.type === "tool_input_start" ? starts[1].id : undefined);
  });

  it("thinking streams as thinking deltas and stays out of the content; text keeps its content index", async () => {
    fake.enqueue({ kind: "text", text: "It is sunny.", thinking: "The user wants the weather. Check it." });
    const { response, events } = await complete();
    const thinking = events.filter((event) => event.type === "thinking_delta");
    expect(thinking.length).toBeGreaterThan(1);
    expect(thinking.every((event) => event.index === 0)).toBe(true);
    expect(thinking.map((event) => event.text).join("")).toBe("The user wants the weather. Check it.");
    // Thinking precedes the answer on the wire, and so in the events.
    expect(events[0]?.type).toBe("thinking_delta");
    expect(response.content).toEqual([{ type: "text", text: "It is sunny." }]);
    expect(events.filter((event) => event.type === "text_delta").every((event) => event.index === 0)).toBe(
      true,
    );
    expect(textOf(events)).toBe("It is sunny.");
  });

  it("usage maps all four counters from message_start and message_delta", async () => {
    fake.enqueue({
      kind: "text",
      text: "ok",
      usage: {
        input_tokens: 120,
        output_tokens: 42,
        cache_creation_input_tokens: 9,
        cache_read_input_tokens: 77,
      },
    });
    const { response } = await complete();
    expect(response.usage).toEqual({
      inputTokens: 120,
      outputTokens: 42,
      cacheCreationInputTokens: 9,
      cacheReadInputTokens: 77,
    });
  });

  it("stop_reason max_tokens maps to max_tokens", async () => {
    fake.enqueue({ kind: "text", text: "cut", stopReason: "max_tokens" });
    const { response } = await complete();
    expect(response.stopReason).toBe("max_tokens");
  });
});

describe("anthropic provider: request mapping", () => {
  it("sends system, tools with input_schema, max_tokens, stream and the key to POST /v1/messages", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
    await complete(
      request({ tools: [{ name: "get_weather", description: "Weather for a city", input_schema: schema }] }),
    );
    const { body, headers } = fake.requests[0]!;
    // SDK 1.x sends the API key as a bearer token, not the older x-api-key header.
    expect(headers.authorization).toBe("Bearer sk-ant-test");
    expect(body).toMatchObject({
      model: "claude-sonnet-4-6",
      system: "You are terse.",
      max_tokens: 1024,
      stream: true,
      tools: [{ name: "get_weather", description: "Weather for a city", input_schema: schema }],
      messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }],
    });
  });

  it("tool_use and tool_result blocks keep the shape the Messages API expects", async () => {
    await complete(
      request({
        messages: [
          { role: "user", content: [{ type: "text", text: "weather?" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Checking." },
              { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
            ],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_1",
                content: [{ type: "text", text: "-3C" }],
                is_error: false,
              },
              {
                type: "image",
                source: { type: "base64", media_type: "image/png", data: "aGVsbG8=" },
              },
            ],
          },
        ],
      }),
    );
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{ type: "text", text: "-3C" }],
            is_error: false,
          },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "aGVsbG8=" } },
        ],
      },
    ]);
  });

  it("a null system and an empty tool list are left off the wire", async () => {
    await complete(request({ system: null }));
    const body = fake.requests[0]!.body;
    expect(body).not.toHaveProperty("system");
    expect(body).not.toHaveProperty("tools");
  });
});

describe("anthropic provider: errors", () => {
  it("an overloaded 529 is a transient ProviderError of kind overloaded", async () => {
    fake.enqueue({ kind: "error", status: 529 });
    const error = await failure();
    expect(error).toMatchObject({ kind: "overloaded", transient: true, status: 529 });
  });

  it("a 429 is a transient ProviderError of kind rate_limited", async () => {
    fake.enqueue({ kind: "error", status: 429, message: "slow down" });
    expect(await failure()).toMatchObject({ kind: "rate_limited", transient: true, status: 429 });
  });

  it.each([500, 503, 408])("a %i is a transient request_failed", async (status) => {
    fake.enqueue({ kind: "error", status });
    expect(await failure()).toMatchObject({ kind: "request_failed", transient: true, status });
  });

  it("a 400 is a non-transient request_failed whose message carries the status and the API's message", async () => {
    fake.enqueue({ kind: "error", status: 400, message: "max_tokens: must be at least 1" });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: false, status: 400 });
    expect(error.message).toContain("400");
    expect(error.message).toContain("max_tokens: must be at least 1");
  });

  it("an overloaded_error event inside the stream is a transient overloaded error", async () => {
    fake.enqueue({ kind: "stream_error", errorType: "overloaded_error", message: "Overloaded" });
    expect(await failure()).toMatchObject({ kind: "overloaded", transient: true });
  });

  it("an api_error event inside the stream is a transient request_failed", async () => {
    fake.enqueue({ kind: "stream_error", errorType: "api_error", message: "Internal server error" });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: true });
    expect(error.message).toContain("Internal server error");
  });

  it("a connection dropped mid-stream is a transient request_failed", async () => {
    fake.enqueue({ kind: "drop", text: "half an ans" });
    expect(await failure()).toMatchObject({ kind: "request_failed", transient: true });
  });

  it("a refused connection is a transient request_failed", async () => {
    // Start the replacement first so it cannot be handed the port being freed.
    const closed = fake;
    fake = await startFakeAnthropic();
    await closed.close();
    provider = createAnthropicProvider({ apiKey: "k", baseURL: closed.url });
    expect(await failure()).toMatchObject({ kind: "request_failed", transient: true, status: undefined });
  });
});

describe("anthropic provider: errors name the provider, the URL and the cause, never the key", () => {
  const KEY = "sk-ant-SECRET-key-3f9c";

  it('a refused port: the endpoint and ECONNREFUSED, not just "Connection error."', async () => {
    const closed = fake;
    fake = await startFakeAnthropic();
    await closed.close();
    provider = createAnthropicProvider({ apiKey: KEY, baseURL: closed.url });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: true, status: undefined });
    expect(error.message).toContain(`anthropic at ${closed.url}/v1/messages`);
    expect(error.message).toMatch(/request failed \(Connection.*ECONNREFUSED/);
    expect(error.message).not.toContain(KEY);
  });

  it("a 500: the endpoint, the status and the provider's message", async () => {
    provider = createAnthropicProvider({ apiKey: KEY, baseURL: fake.url });
    fake.enqueue({ kind: "error", status: 500, message: `upstream broke for ${KEY}` });
    const error = await failure();
    expect(error.message).toContain(`anthropic at ${fake.url}/v1/messages request failed (HTTP 500`);
    expect(error.message).toContain("upstream broke for [redacted]");
    expect(error.message).not.toContain(KEY);
  });

  it("a TLS failure (https to a plain-HTTP port): the endpoint and the TLS error", async () => {
    const https = fake.url.replace(/^http:/, "https:");
    provider = createAnthropicProvider({ apiKey: KEY, baseURL: https });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: true });
    expect(error.message).toContain(`anthropic at ${https}/v1/messages`);
    expect(error.message).toMatch(/request failed \(Connection.*(SSL|TLS|ssl|tls|wrong version)/);
  });

  it("an unknown host: the endpoint and the DNS error; a password in the base URL is never shown", async () => {
    provider = createAnthropicProvider({ apiKey: KEY, baseURL: "http://awaken-no-such-host.invalid" });
    const error = await failure();
    expect(error.message).toContain("anthropic at http://awaken-no-such-host.invalid/v1/messages");
    expect(error.message).toMatch(/request failed \(Connection.*(ENOTFOUND|EAI_AGAIN)/);
    provider = createAnthropicProvider({ apiKey: KEY, baseURL: "http://user:pw-SECRET@127.0.0.1:1" });
    const withPassword = await failure();
    expect(withPassword.message).toContain("anthropic at http://127.0.0.1:1/v1/messages");
    expect(withPassword.message).not.toContain("pw-SECRET");
  });
});

describe("anthropic stream accumulator", () => {
  it("a stream that ends cleanly but without message_stop is a transient request_failed", () => {
    const accumulator = new AnthropicStreamAccumulator(() => {});
    accumulator.add({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "", citations: null },
    });
    expect(() => accumulator.finish()).toThrow(ProviderError);
    expect(() => accumulator.finish()).toThrow(
      expect.objectContaining({ kind: "request_failed", transient: true }),
    );
  });
});

describe("anthropic provider: abort", () => {
  it("aborting a hanging stream gives kind aborted, not transient, promptly", async () => {
    fake.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const pending = failure(request(), controller.signal);
    await fake.waitForRequests(1);
    const started = Date.now();
    controller.abort();
    const error = await pending;
    expect(error).toMatchObject({ kind: "aborted", transient: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("an already aborted signal fails without sending a request", async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await failure(request(), controller.signal)).toMatchObject({ kind: "aborted" });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("fake Anthropic server", () => {
  it("its stream is accepted by the SDK's own MessageStream accumulator", async () => {
    fake.enqueue({ kind: "tool_use", name: "lookup", input: { q: "x", n: [1, 2] }, text: "Sure." });
    const client = new Anthropic({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
    const message = await client.messages
      .stream({ model: "claude-sonnet-4-6", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      .finalMessage();
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.map((block) => block.type)).toEqual(["text", "tool_use"]);
    expect(message.content[1]).toMatchObject({ name: "lookup", input: { q: "x", n: [1, 2] } });
  });

  it("echoes the last user text when nothing is queued", async () => {
    const { response } = await complete();
    expect(response.content).toEqual([{ type: "text", text: "fake: hello there" }]);
  });
});

/** The text the text deltas spell, in arrival order. */
function textOf(events: ModelStreamEvent[]): string {
  return events.map((event) => (event.type === "text_delta" ? event.text : "")).join("");
}

/** The JSON text the tool-input deltas of one tool use spell. */
function inputOf(events: ModelStreamEvent[], index: number): string {
  return events
    .map((event) => (event.type === "tool_input_delta" && event.index === index ? event.partialJson : ""))
    .join("");
}
