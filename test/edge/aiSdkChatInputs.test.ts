/**
 * The AI SDK edge's request parsing and input mapping: the re-sent list yields only what the
 * session has not seen, and anything it cannot map is a readable refusal.
 */
import { describe, expect, it } from "vitest";
import type { PendingAction } from "../../src/coordinator/facts.js";
import { type CommittedView, chatInputs } from "../../src/edge/ai-sdk/chatInputs.js";
import { parseChatRequest } from "../../src/edge/ai-sdk/chatRequest.js";

const view = (clientMessageIds: string[] = [], pending: PendingAction[] = []): CommittedView => ({
  clientMessageIds: new Set(clientMessageIds),
  pending,
});

const user = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });
const body = (messages: unknown[], extra: Record<string, unknown> = {}) => ({
  id: "chat1",
  messages,
  trigger: "submit-message",
  ...extra,
});

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toMatchObject({ name: "AwakenError", category: "invalid" });
    return (error as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("parseChatRequest", () => {
  it("accepts what DefaultChatTransport sends, plus the session fields", () => {
    const parsed = parseChatRequest(
      body([user("m1", "hi")], { messageId: "m1", agentId: "agent_1", threadId: "t" }),
    );
    expect(parsed).toMatchObject({
      id: "chat1",
      trigger: "submit-message",
      agentId: "agent_1",
      threadId: "t",
    });
  });

  it("names the field of a malformed body", () => {
    expect(refusal(() => parseChatRequest([]))).toMatch(/JSON object/);
    expect(refusal(() => parseChatRequest(body([])))).toMatch(/^Invalid chat request: messages:/);
    expect(refusal(() => parseChatRequest({ ...body([user("m1", "hi")]), trigger: "nope" }))).toMatch(
      /trigger/,
    );
    expect(refusal(() => parseChatRequest(body([{ id: "m1", role: "robot", parts: [] }])))).toMatch(
      /messages\.0\.role/,
    );
    expect(refusal(() => parseChatRequest(body([user("m1", "hi")], { id: "x".repeat(300) })))).toMatch(
      /^Invalid chat request: id:/,
    );
  });
});

describe("chatInputs", () => {
  it("enters a new last user message once, under its client id", () => {
    const request = parseChatRequest(body([user("m1", "hi")]));
    expect(chatInputs(request, view())).toEqual({
      inputs: [{ kind: "message", content: [{ type: "text", text: "hi" }], clientMessageId: "m1" }],
      clientAnswered: [],
      dedupeKey: "ai-sdk:message:m1",
      opensTurn: true,
    });
    expect(chatInputs(request, view(["m1"])).inputs).toEqual([]);
  });

  it("refuses a new message while a tool call waits for the chat's answer", () => {
    const request = parseChatRequest(body([user("m1", "hi")]));
    const waiting = view([], [{ eventId: "c1", kind: "confirmation" }]);
    expect(refusal(() => chatInputs(request, waiting))).toMatch(
      /waiting for the answer to a tool call \(c1\)/,
    );
    // A self-hosted worker's result is not the chat's to give: the message is queued behind it.
    expect(
      chatInputs(request, view([], [{ eventId: "c2", kind: "server_tool_result" }])).inputs,
    ).toHaveLength(1);
  });

  it("reads only the last message: earlier ones are history", () => {
    const request = parseChatRequest(
      body([user("m0", "old"), { id: "a0", role: "assistant", parts: [] }, user("m1", "new")]),
    );
    expect(chatInputs(request, view(["m0"])).inputs).toHaveLength(1);
  });

  it("refuses user parts it cannot map, an empty message, regenerate and system messages", () => {
    const file = parseChatRequest(
      body([{ id: "m1", role: "user", parts: [{ type: "file", url: "data:," }] }]),
    );
    expect(refusal(() => chatInputs(file, view()))).toMatch(/part 0 is of type "file"/);
    const empty = parseChatRequest(body([user("m1", "  ")]));
    expect(refusal(() => chatInputs(empty, view()))).toMatch(/no text/);
    const regenerate = parseChatRequest(body([user("m1", "hi")], { trigger: "regenerate-message" }));
    expect(refusal(() => chatInputs(regenerate, view()))).toMatch(/Regenerating/);
    const system = parseChatRequest(
      body([{ id: "s", role: "system", parts: [{ type: "text", text: "x" }] }]),
    );
    expect(refusal(() => chatInputs(system, view()))).toMatch(/System messages/);
  });

  it("answers only the calls the session still waits on", () => {
    const assistant = {
      id: "asst_u1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        {
          type: "tool-get_weather",
          toolCallId: "c1",
          state: "output-available",
          input: {},
          output: { temp: 3 },
        },
        { type: "tool-get_time", toolCallId: "c2", state: "output-error", input: {}, errorText: "no clock" },
        {
          type: "tool-bash",
          toolCallId: "c3",
          state: "approval-responded",
          input: {},
          approval: { id: "c3", approved: false, reason: "not now" },
        },
        {
          type: "tool-old",
          toolCallId: "c0",
          state: "output-available",
          input: {},
          output: "answered before",
        },
      ],
    };
    const request = parseChatRequest(body([user("m1", "hi"), assistant]));
    const pending: PendingAction[] = [
      { eventId: "c1", kind: "client_tool_result" },
      { eventId: "c2", kind: "client_tool_result" },
      { eventId: "c3", kind: "confirmation", afterAllow: "server" },
    ];
    const mapped = chatInputs(request, view(["m1"], pending));
    expect(mapped.inputs).toEqual([
      {
        kind: "tool_result",
        callId: "c1",
        content: [{ type: "text", text: '{"temp":3}' }],
        isError: false,
        executor: "client",
      },
      {
        kind: "tool_result",
        callId: "c2",
        content: [{ type: "text", text: "no clock" }],
        isError: true,
        executor: "client",
      },
      { kind: "tool_confirmation", callId: "c3", allowed: false, denyMessage: "not now" },
    ]);
    expect(mapped.clientAnswered).toEqual(["c1", "c2"]);
    expect(mapped.opensTurn).toBe(false);
    // The same list once everything is answered: nothing to send.
    expect(chatInputs(request, view(["m1"], [])).inputs).toEqual([]);
  });

  it("waits for an approval response: a still-requested approval sends nothing", () => {
    const assistant = {
      id: "a",
      role: "assistant",
      parts: [
        {
          type: "tool-bash",
          toolCallId: "c3",
          state: "approval-requested",
          input: {},
          approval: { id: "c3" },
        },
      ],
    };
    const request = parseChatRequest(body([assistant]));
    expect(chatInputs(request, view([], [{ eventId: "c3", kind: "confirmation" }])).inputs).toEqual([]);
  });

  it("refuses an approval response without a verdict", () => {
    const assistant = {
      id: "a",
      role: "assistant",
      parts: [
        {
          type: "tool-bash",
          toolCallId: "c3",
          state: "approval-responded",
          input: {},
          approval: { id: "c3" },
        },
      ],
    };
    const request = parseChatRequest(body([assistant]));
    expect(refusal(() => chatInputs(request, view([], [{ eventId: "c3", kind: "confirmation" }])))).toMatch(
      /approved: true or false/,
    );
  });
});
