/**
 * The AI SDK UI message stream edge, judged by the official client: `AbstractChat` with
 * `DefaultChatTransport` from `ai`, over real HTTP, against the real server and the offline model.
 * Every assertion reads the client's own state (`chat.messages`, `chat.status`) or the history.
 */
import { randomUUID } from "node:crypto";
import type { UIMessage } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AiSdkChat, aiSdkChat, partsOf, readChunks } from "../support/aiSdkChat.js";
import { AI_SDK_CLIENTS, type AiSdkClient } from "../support/aiSdkClients.js";
import { history, isEndTurnIdle, MODEL, WEATHER_TOOL, waitForHistory } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

let t: TestServer;
let plainAgent: string;
/** The client major of the block now running (set by its `beforeAll`). */
let client: AiSdkClient;
beforeAll(async () => {
  // Hand tools here run on tier "none": the operator option enables it.
  t = await startTestServer({ workerPollMs: 50, allowWeakerTiers: true });
  plainAgent = (await t.client.beta.agents.create({ name: "chat", model: MODEL })).id;
});
afterAll(async () => {
  await t.close();
});

const chatId = () => `chat-${randomUUID()}`;
const assistants = (messages: UIMessage[]) => messages.filter((m) => m.role === "assistant");

function open(options: Partial<Parameters<typeof aiSdkChat>[0]> & { agentId?: string } = {}): AiSdkChat {
  const { agentId, ...rest } = options;
  return aiSdkChat({
    ai: client.ai,
    baseUrl: t.server.url,
    apiKey: TEST_API_KEY,
    id: chatId(),
    body: { agentId: agentId ?? plainAgent },
    ...rest,
  });
}

async function api(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${t.server.url}${path}`, {
    ...init,
    headers: { "x-api-key": TEST_API_KEY, ...(init.headers as Record<string, string> | undefined) },
  });
}

async function historyOf(sessionId: string): Promise<UIMessage[]> {
  const response = await api(`/v1/ai-sdk/threads/${sessionId}/messages`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { items: UIMessage[]; cursor: string | null };
  return body.items;
}

/** What the chat shows equals what the history read rebuilds (ids, roles and parts). */
async function expectHistoryMatches(h: AiSdkChat): Promise<void> {
  const rebuilt = await historyOf(h.sessionId()!);
  const shown = (messages: UIMessage[]) =>
    messages.map((m) => ({ id: m.id, role: m.role, parts: partsOf(m) }));
  expect(shown(rebuilt)).toEqual(shown(h.chat.messages));
}

async function toolSession(tools: unknown[]) {
  const agent = await t.client.beta.agents.create({
    name: "chat-tools",
    model: MODEL,
    tools: tools as never,
  });
  const environment = await t.client.beta.environments.create({
    name: "chat-tools",
    config: { type: "cloud", sandbox: { tier: "none" } } as never,
  });
  return { agentId: agent.id, environmentId: environment.id };
}

const bash = (policy: "always_allow" | "always_ask") => [
  { type: "agent_toolset_20260401", configs: [{ name: "bash", permission_policy: { type: policy } }] },
];

// Every test runs once per client major: the edge serves `ai` 6 and 7 alike.
describe.each(AI_SDK_CLIENTS)("$label", (each) => {
  beforeAll(() => {
    client = each;
  });

  describe("AI SDK chat: text turns", () => {
    it("streams a text turn into the chat and names the session", async () => {
      const h = open();
      await h.chat.sendMessage({ text: "hello there" });
      expect(h.chat.status).toBe("ready");
      expect(h.errors).toEqual([]);
      const [user, assistant] = h.chat.messages;
      expect(user).toMatchObject({ role: "user", parts: [{ type: "text", text: "hello there" }] });
      expect(assistant?.role).toBe("assistant");
      expect(partsOf(assistant)).toEqual([
        { type: "step-start" },
        { type: "text", state: "done", text: "[offline model] You said: hello there" },
      ]);
      expect(h.finishes.at(-1)).toMatchObject({ finishReason: "stop", isAbort: false, isError: false });
      expect(h.sessionId()).toMatch(/^sesn_/);

      // A second message on the same chat: one more user message entered, the earlier one not again.
      await h.chat.sendMessage({ text: "and again" });
      expect(h.chat.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
      const events = await history(t.client, h.sessionId()!);
      expect(events.filter((e) => e.type === "user.message")).toHaveLength(2);
      await expectHistoryMatches(h);
    });

    it("keeps the metadata a client put on its message and gives it back on reload", async () => {
      const h = open();
      const metadata = { sentFrom: "composer", tags: ["a", "b"], nested: { n: 1, ok: true } };
      await h.chat.sendMessage({ text: "with a note", metadata });
      expect(h.errors).toEqual([]);
      const rebuilt = await historyOf(h.sessionId()!);
      expect(rebuilt[0]).toMatchObject({ id: h.chat.messages[0]?.id, role: "user", metadata });
      // The reloaded list, re-sent as the client holds it, enters nothing twice.
      const reloaded = aiSdkChat({
        ai: client.ai,
        baseUrl: t.server.url,
        apiKey: TEST_API_KEY,
        id: h.chat.id,
        messages: rebuilt,
      });
      await reloaded.chat.sendMessage({ text: "after reload" });
      const again = await historyOf(h.sessionId()!);
      expect(again.map((m) => [m.role, m.metadata])).toEqual([
        ["user", metadata],
        ["assistant", undefined],
        ["user", undefined],
        ["assistant", undefined],
      ]);
      // The Managed Agents wire has no field for it: its user.message carries the content only.
      const events = await history(t.client, h.sessionId()!);
      expect(Object.keys(events.find((e) => e.type === "user.message") ?? {}).sort()).toEqual([
        "content",
        "id",
        "processed_at",
        "type",
      ]);
    });

    it("refuses message metadata larger than its bound, writing nothing", async () => {
      const h = open();
      await h.chat.sendMessage({ text: "too much", metadata: { blob: "x".repeat(20_000) } });
      expect(h.chat.status).toBe("error");
      expect(h.chat.error?.message).toMatch(/metadata is larger than 16384 characters/);
      expect(h.sessionId()).toBeUndefined();
    });

    it("chats on a session made elsewhere when threadId names it (no agentId needed)", async () => {
      const environment = await t.client.beta.environments.create({ name: "elsewhere" });
      const session = await t.client.beta.sessions.create({
        agent: plainAgent,
        environment_id: environment.id,
      });
      const h = aiSdkChat({
        ai: client.ai,
        baseUrl: t.server.url,
        apiKey: TEST_API_KEY,
        id: chatId(),
        body: { threadId: session.id },
      });
      await h.chat.sendMessage({ text: "over here" });
      expect(h.chat.status).toBe("ready");
      expect(h.sessionId()).toBe(session.id);
      expect(partsOf(assistants(h.chat.messages)[0]).at(-1)).toMatchObject({
        text: "[offline model] You said: over here",
      });
    });

    it("answers the raw wire with the stream headers, SSE framing and [DONE]", async () => {
      const id = chatId();
      const response = await api("/v1/ai-sdk/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id,
          trigger: "submit-message",
          agentId: plainAgent,
          messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: "raw" }] }],
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      expect(response.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
      expect(response.headers.get("x-awaken-session-id")).toMatch(/^sesn_/);
      const text = await response.text();
      expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
      const chunks = await readChunks(new Response(text), undefined, client.ai);
      expect(chunks.map((c) => c.type)).toEqual([
        "start",
        "start-step",
        "text-start",
        ...chunks.filter((c) => c.type === "text-delta").map(() => "text-delta"),
        "text-end",
        "finish-step",
        "finish",
      ]);
    });
  });

  describe("AI SDK chat: tools", () => {
    it("shows a server tool's input and output inside the turn", async () => {
      const { agentId, environmentId } = await toolSession(bash("always_allow"));
      const h = open({ agentId, body: { agentId, environmentId } });
      await h.chat.sendMessage({ text: 'call bash {"command":"echo from-bash"}' });
      expect(h.chat.status).toBe("ready");
      const assistant = assistants(h.chat.messages).at(-1);
      const tool = assistant?.parts.find((p) => p.type === "tool-bash");
      expect(tool).toMatchObject({
        state: "output-available",
        input: { command: "echo from-bash" },
        providerExecuted: true,
      });
      expect(String((tool as { output?: unknown }).output)).toContain("from-bash");
      expect(partsOf(assistant).at(-1)).toMatchObject({
        type: "text",
        text: expect.stringContaining("Tool result received"),
      });
      expect(assistants(h.chat.messages)).toHaveLength(1);
      await expectHistoryMatches(h);
    });

    it("runs a client tool: onToolCall → addToolOutput → automatic re-POST, the result committed once", async () => {
      const { agentId } = await toolSession([WEATHER_TOOL]);
      let h: AiSdkChat | undefined;
      h = open({
        agentId,
        sendAutomaticallyWhen: client.ai.lastAssistantMessageIsCompleteWithToolCalls,
        onToolCall: ({ toolCall }) => {
          // Not awaited: the chat runs onToolCall inside its own job queue.
          if (toolCall.toolName === "get_weather") {
            void h?.chat.addToolOutput({
              tool: "get_weather",
              toolCallId: toolCall.toolCallId,
              output: { temp: 21 },
            });
          }
        },
      });
      await h.chat.sendMessage({ text: 'call get_weather {"city":"Oslo"}' });
      await h.waitForFinishes(2);
      await waitForStatus(h, "ready");
      expect(h.errors).toEqual([]);
      expect(h.finishes.map((f) => f.finishReason)).toEqual(["tool-calls", "stop"]);
      // One assistant message across both responses: the continuation kept its id.
      expect(assistants(h.chat.messages)).toHaveLength(1);
      expect(h.finishes[0]?.message.id).toBe(h.finishes[1]?.message.id);
      const assistant = assistants(h.chat.messages)[0];
      expect(assistant?.parts.find((p) => p.type === "tool-get_weather")).toMatchObject({
        state: "output-available",
        input: { city: "Oslo" },
        output: { temp: 21 },
      });
      expect(partsOf(assistant).at(-1)).toMatchObject({
        text: '[offline model] Tool result received: {"temp":21}',
      });
      const events = await history(t.client, h.sessionId()!);
      expect(events.filter((e) => e.type === "user.custom_tool_result")).toHaveLength(1);
      expect(events.filter((e) => e.type === "user.message")).toHaveLength(1);
      await expectHistoryMatches(h);
    });

    for (const approved of [true, false]) {
      it(`continues an approval ${approved ? "allowed" : "denied"} on the same assistant message`, async () => {
        const { agentId, environmentId } = await toolSession(bash("always_ask"));
        const h = open({
          agentId,
          body: { agentId, environmentId },
          sendAutomaticallyWhen: client.ai.lastAssistantMessageIsCompleteWithApprovalResponses,
        });
        await h.chat.sendMessage({ text: 'call bash {"command":"echo approved-run"}' });
        expect(h.finishes.at(-1)?.finishReason).toBe("tool-calls");
        const asked = assistants(h.chat.messages)[0]?.parts.find((p) => p.type === "tool-bash") as
          | { state: string; approval: { id: string }; toolCallId: string }
          | undefined;
        expect(asked?.state).toBe("approval-requested");
        expect(asked?.approval.id).toBe(asked?.toolCallId);
        const firstId = assistants(h.chat.messages)[0]?.id;

        await h.chat.addToolApprovalResponse({
          id: asked!.approval.id,
          approved,
          ...(approved ? {} : { reason: "not now" }),
        });
        await h.waitForFinishes(2);
        await waitForStatus(h, "ready");
        expect(h.errors).toEqual([]);
        expect(assistants(h.chat.messages)).toHaveLength(1);
        const assistant = assistants(h.chat.messages)[0];
        expect(assistant?.id).toBe(firstId);
        const tool = assistant?.parts.find((p) => p.type === "tool-bash");
        if (approved) {
          expect(tool).toMatchObject({ state: "output-available" });
          expect(String((tool as { output?: unknown }).output)).toContain("approved-run");
        } else {
          expect(tool).toMatchObject({ state: "output-denied" });
          expect(partsOf(assistant).at(-1)).toMatchObject({
            text: expect.stringContaining("The user denied this tool call: not now"),
          });
        }
        const events = await history(t.client, h.sessionId()!);
        expect(events.filter((e) => e.type === "user.tool_confirmation")).toMatchObject([
          { result: approved ? "allow" : "deny" },
        ]);
        await expectHistoryMatches(h);
      });
    }
  });

  describe("AI SDK chat: disconnects and resume", () => {
    it("stop() mid-stream ends the client's request; the run still commits the whole turn", async () => {
      await withOfflineDelay(async () => {
        const h = open();
        const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
        const sent = h.chat.sendMessage({ text: words });
        await waitFor(() => textOf(assistants(h.chat.messages).at(-1)).length > 0);
        await h.chat.stop();
        await sent;
        expect(h.chat.status).toBe("ready");
        expect(h.finishes.at(-1)?.isAbort).toBe(true);
        const partial = textOf(assistants(h.chat.messages).at(-1));
        expect(partial.length).toBeLessThan(`[offline model] You said: ${words}`.length);
        await waitForHistory(t.client, h.sessionId()!, (events) => events.some(isEndTurnIdle), 20_000);
        const rebuilt = await historyOf(h.sessionId()!);
        expect(textOf(assistants(rebuilt)[0])).toBe(`[offline model] You said: ${words}`);
      });
    });

    it("resumeStream replays the running turn from its start, then live; an idle chat gets 204", async () => {
      await withOfflineDelay(async () => {
        const first = open();
        const words = Array.from({ length: 30 }, (_, i) => `r${i}`).join(" ");
        const sent = first.chat.sendMessage({ text: words });
        await waitFor(() => textOf(assistants(first.chat.messages).at(-1)).length > 0);

        // Another tab of the same chat: no messages yet, it reattaches to the live turn.
        const second = aiSdkChat({
          ai: client.ai,
          baseUrl: t.server.url,
          apiKey: TEST_API_KEY,
          id: first.chat.id,
        });
        await second.chat.resumeStream();
        await sent;
        expect(second.chat.status).toBe("ready");
        expect(second.errors).toEqual([]);
        const resumed = assistants(second.chat.messages);
        expect(resumed).toHaveLength(1);
        expect(resumed[0]?.id).toBe(assistants(first.chat.messages)[0]?.id);
        expect(partsOf(resumed[0])).toEqual(partsOf(assistants(first.chat.messages)[0]));
        expect(textOf(resumed[0])).toBe(`[offline model] You said: ${words}`);

        // The turn is over: nothing to resume.
        const idle = await api(`/v1/ai-sdk/chat/${encodeURIComponent(first.chat.id)}/stream`);
        expect(idle.status).toBe(204);
      });
      const unknown = aiSdkChat({ ai: client.ai, baseUrl: t.server.url, apiKey: TEST_API_KEY, id: chatId() });
      await unknown.chat.resumeStream();
      expect(unknown.chat.status).toBe("ready");
      expect(unknown.chat.messages).toEqual([]);
    });
  });

  describe("AI SDK chat: refusals", () => {
    it("answers a malformed body with a readable 400 in plain text", async () => {
      const response = await api("/v1/ai-sdk/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json",
      });
      expect(response.status).toBe(400);
      expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect((await response.text()).length).toBeGreaterThan(0);

      const wrong = await api("/v1/ai-sdk/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "x", messages: [], trigger: "submit-message" }),
      });
      expect(wrong.status).toBe(400);
      expect(await wrong.text()).toMatch(/^Invalid chat request: messages:/);
    });

    it("refuses an unknown chat without agentId, creating nothing", async () => {
      const before = await sessionCount();
      const h = aiSdkChat({ ai: client.ai, baseUrl: t.server.url, apiKey: TEST_API_KEY, id: chatId() });
      await h.chat.sendMessage({ text: "hello?" });
      expect(h.chat.status).toBe("error");
      expect(h.chat.error?.message).toMatch(/pass "agentId"/);
      expect(await sessionCount()).toBe(before);
    });

    it("refuses a message to an archived session and an unsupported part, writing nothing", async () => {
      const h = open();
      await h.chat.sendMessage({ text: "first" });
      const sessionId = h.sessionId()!;

      await h.chat.sendMessage({
        text: "with a file",
        files: [{ type: "file", mediaType: "text/plain", url: "data:text/plain;base64,aGk=" }],
      });
      expect(h.chat.status).toBe("error");
      expect(h.chat.error?.message).toMatch(/only text parts are supported/);

      await t.client.beta.sessions.archive(sessionId);
      const events = (await history(t.client, sessionId)).length;
      h.chat.clearError();
      await h.chat.sendMessage({ text: "after archive" });
      expect(h.chat.status).toBe("error");
      expect(h.chat.error?.message).toMatch(/archived/);
      expect((await history(t.client, sessionId)).length).toBe(events);
    });

    it("refuses a new message while an approval is pending, writing nothing", async () => {
      const { agentId, environmentId } = await toolSession(bash("always_ask"));
      const h = open({ agentId, body: { agentId, environmentId } });
      await h.chat.sendMessage({ text: 'call bash {"command":"echo later"}' });
      expect(h.finishes.at(-1)?.finishReason).toBe("tool-calls");
      const events = (await history(t.client, h.sessionId()!)).length;
      await h.chat.sendMessage({ text: "never mind" });
      expect(h.chat.status).toBe("error");
      expect(h.chat.error?.message).toMatch(/waiting for the answer to a tool call/);
      expect((await history(t.client, h.sessionId()!)).length).toBe(events);
    });

    it("answers a missing API key with 401 text", async () => {
      const response = await fetch(`${t.server.url}/v1/ai-sdk/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(response.status).toBe(401);
      expect(await response.text()).toMatch(/API key/);
    });
  });

  async function sessionCount(): Promise<number> {
    let count = 0;
    for await (const _ of t.client.beta.sessions.list({ limit: 100 })) count++;
    return count;
  }

  function textOf(message: UIMessage | undefined): string {
    return (message?.parts ?? []).flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
  }

  async function waitFor(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error("condition not met in time");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function waitForStatus(h: AiSdkChat, status: string): Promise<void> {
    await waitFor(() => h.chat.status === status);
  }

  /** The offline model waits between words, so a turn is still streaming when the test acts. */
  async function withOfflineDelay(fn: () => Promise<void>): Promise<void> {
    const previous = process.env.AWAKEN_OFFLINE_DELAY_MS;
    process.env.AWAKEN_OFFLINE_DELAY_MS = "40";
    try {
      await fn();
    } finally {
      if (previous === undefined) delete process.env.AWAKEN_OFFLINE_DELAY_MS;
      else process.env.AWAKEN_OFFLINE_DELAY_MS = previous;
    }
  }
});
