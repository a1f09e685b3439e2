import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_WORKSPACE_ID } from "../../src/control/iamService.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import type { LiveEvidence } from "../../src/coordinator/ports.js";
import type { TailItem } from "../../src/coordinator/sessionTail.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { StreamReader, userMessage, WEATHER_TOOL } from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// The runtime's previews on the real server: each carries the id of the fact it becomes, so a tail
// (and every edge formatting it) can replace the preview with the committed fact.

let fake: FakeModelServer;
let t: TestServer;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({ env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
});

afterAll(async () => {
  await t?.close();
  await fake?.close();
});

/** Opens the tail, sends `text`, and collects everything up to the turn's idle. */
async function turn(sessionId: string, text: string): Promise<TailItem[]> {
  const controller = new AbortController();
  const tail = await t.server.openTail(DEFAULT_WORKSPACE_ID, sessionId, {
    previews: true,
    signal: controller.signal,
  });
  const items: TailItem[] = [];
  const collected = (async () => {
    for await (const item of tail) {
      items.push(item);
      if (item.kind === "fact" && item.fact.type === "session.status_idle") return;
    }
  })();
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage(text)] });
  const timeout = setTimeout(() => controller.abort(), 10_000);
  await collected;
  clearTimeout(timeout);
  controller.abort();
  return items;
}

function facts(items: TailItem[], type: string): CommittedFact[] {
  return items.flatMap((item) => (item.kind === "fact" && item.fact.type === type ? [item.fact] : []));
}

function previews(items: TailItem[]): LiveEvidence[] {
  return items.flatMap((item) => (item.kind === "preview" ? [item.evidence] : []));
}

function startOf(items: TailItem[], preview: string) {
  return previews(items).filter(
    (evidence): evidence is LiveEvidence & { kind: "preview_start" } =>
      evidence.kind === "preview_start" && evidence.preview === preview,
  );
}

function spelled(items: TailItem[], eventId: string): string {
  return previews(items)
    .map((evidence) =>
      evidence.kind === "preview_delta" && evidence.eventId === eventId ? evidence.text : "",
    )
    .join("");
}

/** Every preview item of `eventId` comes before the fact with that id. */
function previewsPrecedeFact(items: TailItem[], eventId: string): boolean {
  const factAt = items.findIndex((item) => item.kind === "fact" && item.fact.id === eventId);
  const lastPreview = items.findLastIndex(
    (item) => item.kind === "preview" && item.evidence.eventId === eventId,
  );
  return factAt !== -1 && lastPreview !== -1 && lastPreview < factAt;
}

describe("live previews (offline model, no key)", () => {
  it("text and tool input preview under the ids of the message and the tool call they become", async () => {
    const agent = await t.client.beta.agents.create({
      name: "Offline",
      model: "offline-previews",
      tools: [WEATHER_TOOL],
    });
    const environment = await t.client.beta.environments.create({ name: "offline" });
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    const items = await turn(session.id, 'Please call get_weather with {"city": "Oslo"}');

    const [message] = facts(items, "agent.message");
    const [textStart] = startOf(items, "text");
    expect(textStart?.eventId).toBe(message?.id);
    expect(spelled(items, message!.id)).toBe("[offline model] Calling get_weather.");
    expect(previewsPrecedeFact(items, message!.id)).toBe(true);

    const [call] = facts(items, "agent.custom_tool_use");
    const [toolStart] = startOf(items, "tool_input");
    expect(toolStart).toEqual({
      kind: "preview_start",
      eventId: call!.id,
      preview: "tool_input",
      toolName: "get_weather",
    });
    expect(JSON.parse(spelled(items, call!.id))).toEqual({ city: "Oslo" });
    expect(previewsPrecedeFact(items, call!.id)).toBe(true);
  });
});

describe("live previews (Anthropic wire)", () => {
  async function claudeSession(): Promise<string> {
    const agent = await t.client.beta.agents.create({
      name: "Claude on the fake",
      model: "claude-sonnet-4-6",
      tools: [WEATHER_TOOL],
    });
    const environment = await t.client.beta.environments.create({ name: "previews" });
    return (await t.client.beta.sessions.create({ agent: agent.id, environment_id: environment.id })).id;
  }

  it("thinking previews end with an agent.thinking fact of the same id, before the message", async () => {
    const sessionId = await claudeSession();
    fake.enqueue({ kind: "text", text: "Sunny in Oslo.", thinking: "The user wants the weather." });
    const items = await turn(sessionId, "Weather?");
    const [thinking] = facts(items, "agent.thinking");
    const [thinkingStart] = startOf(items, "thinking");
    expect(thinkingStart?.eventId).toBe(thinking?.id);
    expect(spelled(items, thinking!.id)).toBe("The user wants the weather.");
    expect(previewsPrecedeFact(items, thinking!.id)).toBe(true);
    const [message] = facts(items, "agent.message");
    expect(thinking!.seq).toBeLessThan(message!.seq);
  });

  it("two tool calls after text each preview under their own call's id", async () => {
    const sessionId = await claudeSession();
    fake.enqueue({
      kind: "tool_use",
      name: "get_weather",
      input: { city: "Oslo" },
      text: "Checking both.",
      more: [{ name: "get_weather", input: { city: "Lima" } }],
    });
    const items = await turn(sessionId, "Oslo and Lima?");
    const calls = facts(items, "agent.custom_tool_use");
    expect(calls.map((call) => call.body.input)).toEqual([{ city: "Oslo" }, { city: "Lima" }]);
    expect(startOf(items, "tool_input").map((start) => start.eventId)).toEqual(calls.map((call) => call.id));
    for (const call of calls) {
      expect(JSON.parse(spelled(items, call.id))).toEqual(call.body.input);
      expect(previewsPrecedeFact(items, call.id)).toBe(true);
    }
  });

  it("a stream that fails mid-answer abandons its preview; the retry previews under a new id", async () => {
    const sessionId = await claudeSession();
    fake.enqueue({ kind: "stream_error", text: "partial answer" }, { kind: "text", text: "Second try." });
    const items = await turn(sessionId, "Hello?");
    const starts = startOf(items, "text");
    expect(starts).toHaveLength(2);
    const abandoned = previews(items).filter((evidence) => evidence.kind === "preview_abandoned");
    expect(abandoned.map((evidence) => evidence.eventId)).toEqual([starts[0]!.eventId]);
    const messages = facts(items, "agent.message");
    expect(messages.map((message) => message.id)).toEqual([starts[1]!.eventId]);
  });

  it("on the Managed wire, agent.thinking deltas show as asked and tool-input previews never do", async () => {
    const sessionId = await claudeSession();
    const reader = await StreamReader.open(t.client, sessionId, {
      event_deltas: ["agent.thinking", "agent.message"],
    });
    try {
      fake.enqueue({
        kind: "tool_use",
        name: "get_weather",
        input: { city: "Oslo" },
        text: "Let me look.",
        thinking: "Needs a lookup.",
      });
      await t.client.beta.sessions.events.send(sessionId, { events: [userMessage("Oslo?")] });
      const idle = await reader.until((e) => e.type === "session.status_idle");
      const events = reader.events.slice(0, reader.events.indexOf(idle) + 1).filter((e) => e.type !== "ping");
      const thinking = events.find((e) => e.type === "agent.thinking");
      const message = events.find((e) => e.type === "agent.message");
      const starts = events.filter((e) => e.type === "event_start");
      expect(starts.map((e) => e.event)).toEqual([
        { id: thinking?.id, type: "agent.thinking" },
        { id: message?.id, type: "agent.message" },
      ]);
      const deltaIds = new Set(events.filter((e) => e.type === "event_delta").map((e) => e.event_id));
      expect(deltaIds).toEqual(new Set([thinking?.id, message?.id]));
      expect(events.some((e) => e.type.startsWith("awaken."))).toBe(false);
    } finally {
      await reader.close();
    }
  });
});
