import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../src/providers/openaiProvider.js";
import { OpenAIStreamAccumulator } from "../../src/providers/openaiStream.js";
import {
  type ModelProvider,
  type ModelRequest,
  type ModelStreamEvent,
  ProviderError,
} from "../../src/providers/ports.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { startFakeOpenAI } from "../support/fakeOpenAIServer.js";

let fake: FakeModelServer;
let provider: ModelProvider;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  provider = createOpenAIProvider({ apiKey: "sk-openai-test", baseURL: fake.url });
});

afterEach(async () => {
  await fake.close();
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: "gpt-4o-mini",
    system: "You are terse.",
    messages: [{ role: "user", content: [{ type: "text", text: "hello there" }] }],
    tools: [],
    maxTokens: 512,
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

describe("openai provider: streaming", () => {
  it("streamed text deltas reach onEvent in order at index 0 and the final content is their concatenation", async () => {
    fake.enqueue({ kind: "text", text: "Pack my box with five dozen liquor jugs." });
    const { response, events } = await complete();
    expect(events.length).toBeGreaterThan(3);
    expect(events.every((event) => event.index === 0)).toBe(true);
    const joined = textOf(events);
    expect(joined).toBe("Pack my box with five dozen liquor jugs.");
    expect(response.content).toEqual([{ type: "text", text: joined }]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("tool call argument fragments are joined and parsed into a tool_use block after the text", async () => {
    const input = { path: "/tmp/a.txt", lines: [1, 2, 3], options: { follow: true } };
    fake.enqueue({ kind: "tool_use", name: "read_file", input, id: "call_abc", text: "Reading." });
    const { response } = await complete();
    expect(response.content).toEqual([
      { type: "text", text: "Reading." },
      { type: "tool_use", id: "call_abc", name: "read_file", input },
    ]);
    expect(response.stopReason).toBe("tool_use");
  });

  it("parallel tool calls open with name and id in order, and their argument fragments spell the input", async () => {
    const first = { path: "/tmp/a.txt", lines: [1, 2, 3] };
    const second = { path: "/tmp/b.txt" };
    fake.enqueue({
      kind: "tool_use",
      name: "read_file",
      input: first,
      id: "call_abc",
      text: "Reading both.",
      more: [{ name: "stat_file", input: second }],
    });
    const { response, events } = await complete();
    expect(events.filter((event) => event.type === "tool_input_start")).toEqual([
      { type: "tool_input_start", index: 0, id: "call_abc", name: "read_file" },
      { type: "tool_input_start", index: 1, id: expect.stringMatching(/^call_fake_/), name: "stat_file" },
    ]);
    expect(inputOf(events, 0)).toBe(JSON.stringify(first));
    expect(inputOf(events, 1)).toBe(JSON.stringify(second));
    expect(response.content).toEqual([
      { type: "text", text: "Reading both." },
      { type: "tool_use", id: "call_abc", name: "read_file", input: first },
      { type: "tool_use", id: expect.stringMatching(/^call_fake_/), name: "stat_file", input: second },
    ]);
  });

  it("reasoning from an OpenAI-compatible server streams as thinking deltas, outside the content", async () => {
    fake.enqueue({ kind: "text", text: "Done.", thinking: "Short question, short answer." });
    const { response, events } = await complete();
    const thinking = events.filter((event) => event.type === "thinking_delta");
    expect(thinking.map((event) => event.text).join("")).toBe("Short question, short answer.");
    expect(thinking.every((event) => event.index === 0)).toBe(true);
    expect(response.content).toEqual([{ type: "text", text: "Done." }]);
  });

  it("finish_reason length maps to max_tokens", async () => {
    fake.enqueue({ kind: "text", text: "cut", stopReason: "max_tokens" });
    expect((await complete()).response.stopReason).toBe("max_tokens");
  });

  it("usage maps prompt, completion and cached prompt tokens from the final usage chunk", async () => {
    fake.enqueue({
      kind: "text",
      text: "ok",
      usage: { input_tokens: 300, output_tokens: 12, cache_read_input_tokens: 256 },
    });
    expect((await complete()).response.usage).toEqual({
      inputTokens: 300,
      outputTokens: 12,
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 256,
    });
  });
});

describe("openai provider: request mapping", () => {
  it("sends system as a system message, tools as functions, max_completion_tokens and include_usage", async () => {
    const schema = { type: "object", properties: { q: { type: "string" } }, required: ["q"] };
    await complete(
      request({ tools: [{ name: "search", description: "Search the web", input_schema: schema }] }),
    );
    const { body, headers } = fake.requests[0]!;
    expect(headers.authorization).toBe("Bearer sk-openai-test");
    expect(body).toMatchObject({
      model: "gpt-4o-mini",
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 512,
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "hello there" },
      ],
      tools: [
        { type: "function", function: { name: "search", description: "Search the web", parameters: schema } },
      ],
    });
  });

  it("assistant tool_use becomes tool_calls and each tool_result becomes a tool message", async () => {
    await complete(
      request({
        system: null,
        messages: [
          { role: "user", content: [{ type: "text", text: "two lookups" }] },
          {
            role: "assistant",
            content: [
              { type: "text", text: "Looking." },
              { type: "tool_use", id: "call_1", name: "lookup", input: { k: "a" } },
              { type: "tool_use", id: "call_2", name: "lookup", input: { k: "b" } },
            ],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "call_1",
                content: [{ type: "text", text: "A" }],
                is_error: false,
              },
              {
                type: "tool_result",
                tool_use_id: "call_2",
                content: [{ type: "text", text: "boom" }],
                is_error: true,
              },
              { type: "text", text: "and now?" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "aGk=" } },
            ],
          },
        ],
      }),
    );
    expect(fake.requests[0]!.body.messages).toEqual([
      { role: "user", content: "two lookups" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "lookup", arguments: '{"k":"a"}' } },
          { id: "call_2", type: "function", function: { name: "lookup", arguments: '{"k":"b"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "A" },
      { role: "tool", tool_call_id: "call_2", content: "Error: boom" },
      {
        role: "user",
        content: [
          { type: "text", text: "and now?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,aGk=" } },
        ],
      },
    ]);
    expect(fake.requests[0]!.body).not.toHaveProperty("tools");
  });
});

describe("openai provider: errors", () => {
  it("an overloaded 529 is a transient ProviderError of kind overloaded", async () => {
    fake.enqueue({ kind: "error", status: 529 });
    expect(await failure()).toMatchObject({ kind: "overloaded", transient: true, status: 529 });
  });

  it("a 429 is a transient ProviderError of kind rate_limited", async () => {
    fake.enqueue({ kind: "error", status: 429 });
    expect(await failure()).toMatchObject({ kind: "rate_limited", transient: true, status: 429 });
  });

  it.each([500, 502, 408])("a %i is a transient request_failed", async (status) => {
    fake.enqueue({ kind: "error", status });
    expect(await failure()).toMatchObject({ kind: "request_failed", transient: true, status });
  });

  it("a 400 is a non-transient request_failed whose message carries the status and the API's message", async () => {
    fake.enqueue({ kind: "error", status: 400, message: "Unsupported parameter: 'max_tokens'" });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: false, status: 400 });
    expect(error.message).toContain("400");
    expect(error.message).toContain("Unsupported parameter: 'max_tokens'");
  });

  it("an error chunk inside the stream is a transient request_failed", async () => {
    fake.enqueue({ kind: "stream_error", message: "The server had an error" });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: true });
    expect(error.message).toContain("The server had an error");
  });

  it("a connection dropped mid-stream is a transient request_failed", async () => {
    fake.enqueue({ kind: "drop" });
    expect(await failure()).toMatchObject({ kind: "request_failed", transient: true });
  });
});

describe("openai provider: abort", () => {
  it("aborting a hanging stream gives kind aborted, not transient, promptly", async () => {
    fake.enqueue({ kind: "hang" });
    const controller = new AbortController();
    const pending = failure(request(), controller.signal);
    await fake.waitForRequests(1);
    const started = Date.now();
    controller.abort();
    expect(await pending).toMatchObject({ kind: "aborted", transient: false });
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("fake OpenAI server", () => {
  it("its stream is accepted by the SDK's own ChatCompletionStream accumulator", async () => {
    fake.enqueue({ kind: "tool_use", name: "lookup", input: { q: "x" }, text: "Sure." });
    const client = new OpenAI({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
    const completion = await client.chat.completions
      .stream({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "hi" }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBe("Sure.");
    expect(choice.message.tool_calls?.[0]).toMatchObject({
      function: { name: "lookup", arguments: '{"q":"x"}' },
    });
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("echoes the last user text when nothing is queued", async () => {
    expect((await complete()).response.content).toEqual([{ type: "text", text: "fake: hello there" }]);
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

describe("openai stream: tool-input previews from compatible servers", () => {
  const chunk = (
    toolCalls: ChatCompletionChunk.Choice.Delta.ToolCall[],
    finish: "tool_calls" | null = null,
  ) =>
    ({
      id: "c",
      object: "chat.completion.chunk",
      created: 0,
      model: "m",
      choices: [{ index: 0, delta: { tool_calls: toolCalls }, logprobs: null, finish_reason: finish }],
    }) as ChatCompletionChunk;

  it("fragments sent before the name are previewed once the name arrives; a missing id is not invented", () => {
    const events: ModelStreamEvent[] = [];
    const accumulator = new OpenAIStreamAccumulator((event) => events.push(event));
    accumulator.add(chunk([{ index: 3, function: { arguments: '{"a":' } }]));
    expect(events).toEqual([]);
    accumulator.add(chunk([{ index: 3, function: { name: "late", arguments: "1}" } }]));
    accumulator.add(chunk([], "tool_calls"));
    expect(events).toEqual([
      { type: "tool_input_start", index: 0, name: "late" },
      { type: "tool_input_delta", index: 0, partialJson: '{"a":1}' },
    ]);
    expect(accumulator.finish().content).toEqual([
      { type: "tool_use", id: "call_3", name: "late", input: { a: 1 } },
    ]);
  });
});

describe("openai provider: errors name the provider, the URL and the cause, never the key", () => {
  const KEY = "sk-openai-SECRET-key-81ab";

  it('a refused port: the endpoint and ECONNREFUSED, not just "Connection error."', async () => {
    const closed = fake;
    fake = await startFakeOpenAI();
    await closed.close();
    provider = createOpenAIProvider({ apiKey: KEY, baseURL: closed.url });
    const error = await failure();
    expect(error).toMatchObject({ kind: "request_failed", transient: true, status: undefined });
    expect(error.message).toContain(`openai at ${closed.url}/chat/completions`);
    expect(error.message).toMatch(/request failed \(Connection.*ECONNREFUSED/);
    expect(error.message).not.toContain(KEY);
  });

  it("a 500: the endpoint, the status and the provider's message", async () => {
    provider = createOpenAIProvider({ apiKey: KEY, baseURL: fake.url });
    fake.enqueue({ kind: "error", status: 500, message: "the model is down" });
    const error = await failure();
    expect(error.message).toContain(`openai at ${fake.url}/chat/completions request failed (HTTP 500`);
    expect(error.message).toContain("the model is down");
  });
});
