/**
 * How AI SDK turns end besides `stop` and `tool-calls`, through the official client against a
 * scripted model on the real Anthropic streaming wire: a failed turn shows the error fact's message,
 * an interrupted one ends with `abort`; thinking streams as reasoning; a re-sent list adds nothing;
 * the history read pages.
 */
import { randomUUID } from "node:crypto";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AiSdkChat, aiSdkChat, readChunks } from "../support/aiSdkChat.js";
import { AI_SDK_CLIENTS, type AiSdkClient } from "../support/aiSdkClients.js";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { history, isEndTurnIdle, MODEL, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let fake: FakeModelServer;
let t: TestServer;
let agentId: string;
/** The client major of the block now running (set by its `beforeAll`). */
let client: AiSdkClient;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  t = await startTestServer({ env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } });
  agentId = (await t.client.beta.agents.create({ name: "turn-ends", model: MODEL })).id;
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "done" });
});

const open = (): AiSdkChat =>
  aiSdkChat({
    ai: client.ai,
    baseUrl: t.server.url,
    apiKey: TEST_API_KEY,
    id: `chat-${randomUUID()}`,
    body: { agentId },
  });

function post(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${t.server.url}/v1/ai-sdk/chat`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": TEST_API_KEY },
    body: JSON.stringify({ trigger: "submit-message", agentId, ...body }),
  });
}

const userMessage = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });

// Every test runs once per client major: the edge serves `ai` 6 and 7 alike.
describe.each(AI_SDK_CLIENTS)("$label", (each) => {
  beforeAll(() => {
    client = each;
  });

  describe("AI SDK chat: how turns end", () => {
    it("a failed turn puts the chat in error with the error fact's message", async () => {
      fake.enqueue({ kind: "error", status: 400, message: "messages: field required" });
      const h = open();
      await h.chat.sendMessage({ text: "fail please" });
      expect(h.chat.status).toBe("error");
      expect(h.chat.error?.message).toContain("messages: field required");
      const events = await history(t.client, h.sessionId()!);
      const error = events.find((e) => e.type === "session.error") as
        | { error?: { message?: string } }
        | undefined;
      expect(h.chat.error?.message).toBe(error?.error?.message);
    });

    it("an interrupt from another client ends the stream with abort, then finish", async () => {
      fake.enqueue({
        kind: "text",
        text: Array.from({ length: 60 }, (_, i) => `word${i}`).join(" "),
        chunkDelayMs: 30,
      });
      const chatId = `chat-${randomUUID()}`;
      const response = await post({ id: chatId, messages: [userMessage("m1", "go on")] });
      const sessionId = response.headers.get("x-awaken-session-id")!;
      // The request is in flight once its text streams; nothing of it is committed before its answer.
      let streaming: () => void = () => undefined;
      const firstDelta = new Promise<void>((resolve) => {
        streaming = resolve;
      });
      const chunks = readChunks(
        response,
        (chunk) => {
          if (chunk.type === "text-delta") streaming();
        },
        client.ai,
      );
      await firstDelta;
      await t.client.beta.sessions.events.send(sessionId, { events: [{ type: "user.interrupt" }] as never });
      const types = (await chunks).map((c) => c.type);
      // Only previews were streamed: their part is closed, then the step, then abort and finish.
      expect(types.slice(-5)).toEqual(["text-delta", "text-end", "finish-step", "abort", "finish"]);
      // The interrupted request left nothing committed; the idle follows the interrupt.
      const events = await waitForHistory(
        t.client,
        sessionId,
        (h) => h.at(-1)?.type === "session.status_idle",
      );
      expect(events.filter((e) => e.type.startsWith("span.") || e.type === "agent.message")).toEqual([]);
      expect(events.slice(-2).map((e) => e.type)).toEqual(["user.interrupt", "session.status_idle"]);
    });

    it("streams thinking as a reasoning part before the text", async () => {
      fake.enqueue({ kind: "text", text: "the answer", thinking: "let me think" });
      const h = open();
      await h.chat.sendMessage({ text: "think" });
      expect(h.chat.status).toBe("ready");
      const parts = h.chat.messages.at(-1)?.parts ?? [];
      expect(parts).toMatchObject([
        { type: "step-start" },
        { type: "reasoning", text: "let me think", state: "done" },
        { type: "text", text: "the answer", state: "done" },
      ]);
    });
  });

  describe("AI SDK chat: re-sent lists and the history read", () => {
    it("a re-sent list with nothing new writes nothing and answers a finished empty message", async () => {
      const chatId = `chat-${randomUUID()}`;
      const first = await post({ id: chatId, messages: [userMessage("m1", "once")] });
      await readChunks(first, undefined, client.ai);
      const sessionId = first.headers.get("x-awaken-session-id")!;
      await waitForHistory(t.client, sessionId, (events) => events.some(isEndTurnIdle));
      const before = (await history(t.client, sessionId)).length;

      const again = await post({ id: chatId, messages: [userMessage("m1", "once")] });
      expect(again.status).toBe(200);
      const chunks = await readChunks(again, undefined, client.ai);
      expect(chunks.map((c) => c.type)).toEqual(["start", "finish"]);
      expect((await history(t.client, sessionId)).length).toBe(before);
    });

    it("pages the history newest first with a cursor, and 404s an unknown session", async () => {
      const h = open();
      for (const text of ["one", "two", "three"]) await h.chat.sendMessage({ text });
      const read = async (query: string) => {
        const response = await fetch(`${t.server.url}/v1/ai-sdk/threads/${h.sessionId()}/messages${query}`, {
          headers: { "x-api-key": TEST_API_KEY },
        });
        return (await response.json()) as { items: UIMessage[]; cursor: string | null };
      };
      const all = await read("");
      expect(all.items.map((m) => m.id)).toEqual(h.chat.messages.map((m) => m.id));
      expect(all.cursor).toBeNull();
      const newest = await read("?limit=4");
      expect(newest.items).toEqual(all.items.slice(2));
      const older = await read(`?limit=4&cursor=${newest.cursor}`);
      expect(older).toEqual({ items: all.items.slice(0, 2), cursor: null });

      const missing = await fetch(`${t.server.url}/v1/ai-sdk/threads/sesn_nope/messages`, {
        headers: { "x-api-key": TEST_API_KEY },
      });
      expect(missing.status).toBe(404);
      expect(await missing.text()).toMatch(/sesn_nope/);
      const badLimit = await fetch(`${t.server.url}/v1/ai-sdk/threads/${h.sessionId()}/messages?limit=0`, {
        headers: { "x-api-key": TEST_API_KEY },
      });
      expect(badLimit.status).toBe(400);
      expect(await badLimit.text()).toMatch(/limit/);
    });
  });
});
