import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { createOfflineProvider } from "../../src/providers/offlineProvider.js";
import type {
  ModelMessage,
  ModelRequest,
  ModelStreamEvent,
  ModelToolSpec,
} from "../../src/providers/ports.js";
import { ProviderError } from "../../src/providers/ports.js";

const provider = createOfflineProvider();

const weatherTool: ModelToolSpec = {
  name: "get_weather",
  description: "Weather for a city",
  input_schema: {
    type: "object",
    properties: {
      city: { type: "string" },
      days: { type: "integer" },
      metric: { type: "boolean" },
      hours: { type: "array" },
      extra: { type: "object" },
      scale: { type: "number" },
      note: { type: ["string", "null"] },
    },
    required: ["city", "days", "metric", "hours", "extra", "scale", "note"],
  },
};

function userSays(text: string): ModelMessage {
  return { role: "user", content: [{ type: "text", text }] };
}

function request(messages: ModelMessage[], tools: ModelToolSpec[] = []): ModelRequest {
  return { model: "offline-echo", system: null, messages, tools, maxTokens: 256 };
}

async function complete(req: ModelRequest, signal = new AbortController().signal) {
  const events: ModelStreamEvent[] = [];
  const response = await provider.complete(req, { signal, onEvent: (event) => events.push(event) });
  return { response, events };
}

afterEach(() => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
});

describe("offline provider: plain text", () => {
  it("echoes the trimmed user text after the [offline model] prefix, streamed word by word", async () => {
    const { response, events } = await complete(request([userSays("  what is the weather like  ")]));
    const text = "[offline model] You said: what is the weather like";
    expect(response.content).toEqual([{ type: "text", text }]);
    expect(response.stopReason).toBe("end_turn");
    expect(events.length).toBe(text.split(" ").length);
    expect(textOf(events)).toBe(text);
    expect(events.every((event) => event.index === 0)).toBe(true);
  });

  it("caps the echoed user text at 500 characters", async () => {
    const { response } = await complete(request([userSays("x".repeat(900))]));
    expect(response.content[0]).toEqual({
      type: "text",
      text: `[offline model] You said: ${"x".repeat(500)}`,
    });
  });

  it("says hello when the last user message has no text", async () => {
    const { response } = await complete(request([{ role: "user", content: [] }]));
    expect(response.content).toEqual([{ type: "text", text: "[offline model] Hello." }]);
  });

  it("every produced text starts with [offline model] and the deltas concatenate to it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), async (said) => {
        const { response, events } = await complete(request([userSays(said)]));
        const first = response.content[0];
        expect(first?.type === "text" && first.text.startsWith("[offline model] ")).toBe(true);
        expect(textOf(events)).toBe(first?.type === "text" ? first.text : "");
      }),
      { numRuns: 60 },
    );
  });
});

describe("offline provider: tool results", () => {
  it("acknowledges a tool result with the first 200 characters of its text", async () => {
    const result = "r".repeat(150) + "s".repeat(150);
    const { response } = await complete(
      request([
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "text", text: result }],
              is_error: false,
            },
          ],
        },
      ]),
    );
    expect(response.content).toEqual([
      { type: "text", text: `[offline model] Tool result received: ${result.slice(0, 200)}` },
    ]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("mentions (error) when the tool result is an error", async () => {
    const { response } = await complete(
      request([
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t1",
              content: [{ type: "text", text: "nope" }],
              is_error: true,
            },
          ],
        },
      ]),
    );
    expect(response.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("(error)") });
    expect(response.content[0]).toMatchObject({ text: expect.stringContaining("nope") });
  });
});

describe("offline provider: tool calls", () => {
  it("'call <tool>' with a JSON object in the text calls that tool with the object as input", async () => {
    const { response, events } = await complete(
      request([userSays('Please call get_weather with {"city": "Oslo", "days": 2} thanks')], [weatherTool]),
    );
    expect(response.stopReason).toBe("tool_use");
    expect(response.content).toEqual([
      { type: "text", text: "[offline model] Calling get_weather." },
      {
        type: "tool_use",
        id: expect.stringMatching(/^toolu_offline_[0-9a-f]{16}$/),
        name: "get_weather",
        input: { city: "Oslo", days: 2 },
      },
    ]);
    expect(textOf(events)).toBe("[offline model] Calling get_weather.");
    // The call streams too: its name first, then its input as JSON fragments, after the text.
    const start = events.findIndex((event) => event.type === "tool_input_start");
    expect(events[start]).toEqual({
      type: "tool_input_start",
      index: 0,
      id: response.content[1]?.type === "tool_use" ? response.content[1].id : "",
      name: "get_weather",
    });
    expect(events.slice(0, start).every((event) => event.type === "text_delta")).toBe(true);
    const fragments = events.flatMap((event) => (event.type === "tool_input_delta" ? [event] : []));
    expect(fragments.length).toBeGreaterThan(1);
    expect(fragments.every((event) => event.index === 0)).toBe(true);
    expect(fragments.map((event) => event.partialJson).join("")).toBe(
      JSON.stringify({ city: "Oslo", days: 2 }),
    );
  });

  it("without JSON in the text the input is built from the schema's required properties", async () => {
    const { response } = await complete(request([userSays("use the tool `get_weather` now")], [weatherTool]));
    expect(response.content[1]).toMatchObject({
      type: "tool_use",
      input: { city: "example", days: 1, metric: true, hours: [], extra: {}, scale: 1, note: "example" },
    });
  });

  it("the tool_use id is deterministic for the same conversation length and tool name", async () => {
    const toolUseId = async (messages: ModelMessage[]) => {
      const { response } = await complete(request(messages, [weatherTool]));
      const block = response.content.find((candidate) => candidate.type === "tool_use");
      return block?.type === "tool_use" ? block.id : undefined;
    };
    const first = await toolUseId([userSays("run get_weather")]);
    expect(first).toBeDefined();
    expect(await toolUseId([userSays("run get_weather please")])).toBe(first);
    const longer = [userSays("hi"), { role: "assistant" as const, content: [] }, userSays("run get_weather")];
    expect(await toolUseId(longer)).not.toBe(first);
  });

  it("a tool name the request does not offer is just echoed", async () => {
    const { response } = await complete(request([userSays("call delete_everything")], [weatherTool]));
    expect(response.stopReason).toBe("end_turn");
    expect(response.content).toEqual([
      { type: "text", text: "[offline model] You said: call delete_everything" },
    ]);
  });
});

describe("offline provider: usage", () => {
  it("counts a token per four characters of request and of output, rounded up, with no cache", async () => {
    const { response } = await complete({ ...request([userSays("hello")]), system: "sys" });
    const output = "[offline model] You said: hello";
    expect(response.usage).toEqual({
      inputTokens: Math.ceil("syshello".length / 4),
      outputTokens: Math.ceil(output.length / 4),
      cacheCreationInputTokens: 0,
      cacheReadInputTokens: 0,
    });
  });
});

describe("offline provider: abort and delay", () => {
  it("an already aborted signal gives kind aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await complete(request([userSays("hi")]), controller.signal).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "aborted", transient: false });
  });

  it("AWAKEN_OFFLINE_DELAY_MS spaces the deltas and an abort mid-stream stops the turn", async () => {
    process.env.AWAKEN_OFFLINE_DELAY_MS = "40";
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    let firstDelta: () => void = () => {};
    const sawFirstDelta = new Promise<void>((resolve) => {
      firstDelta = resolve;
    });
    const started = Date.now();
    const pending = provider
      .complete(request([userSays("one two three four five six seven eight")]), {
        signal: controller.signal,
        onEvent: (event) => {
          events.push(event);
          firstDelta();
        },
      })
      .catch((caught: unknown) => caught);
    await sawFirstDelta;
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    controller.abort();
    expect(await pending).toMatchObject({ kind: "aborted" });
    // "[offline model] You said: one ... eight" is 11 words; the abort cut the stream short.
    expect(events.length).toBeLessThan(11);
  });
});

/** The text the text deltas spell, in arrival order. */
function textOf(events: ModelStreamEvent[]): string {
  return events.map((event) => (event.type === "text_delta" ? event.text : "")).join("");
}
