/**
 * The scenario through the AI SDK UI message stream and its official client: `AbstractChat` with
 * `DefaultChatTransport` from `ai`, answering tools and approvals the way `useChat` pages do (the
 * chat re-posts by itself once every call is answered), `stop()` as a disconnect and
 * `resumeStream()` to come back. The chat id is the session id, which names its own session.
 */
import type Anthropic from "@anthropic-ai/sdk";
import {
  type ChatInit,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from "ai";
import { type AiSdkChat, aiSdkChat } from "../support/aiSdkChat.js";
import { TEST_API_KEY } from "../support/testServer.js";
import type { HistoryTurn, ProtocolDriver, ToolCallState, ToolCallView, TurnView } from "./protocolDriver.js";

type Part = UIMessage["parts"][number];
type ToolPart = Part & { toolCallId: string; state: string; providerExecuted?: boolean };

const sendWhenAnswered: NonNullable<ChatInit<UIMessage>["sendAutomaticallyWhen"]> = (options) =>
  lastAssistantMessageIsCompleteWithToolCalls(options) ||
  lastAssistantMessageIsCompleteWithApprovalResponses(options);

export class AiSdkDriver implements ProtocolDriver {
  readonly name = "AI SDK";
  readonly disconnectInterrupts = false;
  readonly h: AiSdkChat;

  private constructor(
    private readonly baseUrl: string,
    /** The Managed client, for the one thing this protocol has no request for: interrupting. */
    private readonly managed: Anthropic,
    readonly sessionId: string,
    messages: UIMessage[],
  ) {
    this.h = aiSdkChat({
      baseUrl,
      apiKey: TEST_API_KEY,
      id: sessionId,
      messages,
      sendAutomaticallyWhen: sendWhenAnswered,
    });
  }

  /** A chat page opening the session: its messages loaded from the history read, as `useChat` is given them. */
  static async open(baseUrl: string, managed: Anthropic, sessionId: string): Promise<AiSdkDriver> {
    return new AiSdkDriver(baseUrl, managed, sessionId, await readHistory(baseUrl, sessionId));
  }

  async say(text: string): Promise<TurnView> {
    const before = this.h.finishes.length;
    // A page shows the failed turn's error until the user writes again.
    this.h.chat.clearError();
    await this.h.chat.sendMessage({ text });
    return this.settled(before + 1);
  }

  async answerClientTool(callId: string, output: string): Promise<TurnView> {
    const before = this.h.finishes.length;
    const part = this.toolPart(callId);
    await this.h.chat.addToolOutput({
      tool: part.type.slice("tool-".length) as never,
      toolCallId: callId,
      output,
    });
    return this.settled(before + 1);
  }

  async decide(callId: string, allowed: boolean, reason?: string): Promise<TurnView> {
    const before = this.h.finishes.length;
    const part = this.toolPart(callId) as ToolPart & { approval?: { id: string } };
    if (!part.approval) throw new Error(`call ${callId} asks for no approval in the chat`);
    await this.h.chat.addToolApprovalResponse({
      id: part.approval.id,
      approved: allowed,
      ...(reason !== undefined ? { reason } : {}),
    });
    return this.settled(before + 1);
  }

  /**
   * The UI message stream has no stop request (`stop()` only drops the connection), so the turn is
   * interrupted over the Managed wire, as another client would; the chat must show it ended.
   */
  async interruptDuringTurn(text: string): Promise<TurnView> {
    const before = this.h.finishes.length;
    const sent = this.h.chat.sendMessage({ text });
    await this.untilTextStreams(text);
    await this.managed.beta.sessions.events.send(this.sessionId, { events: [{ type: "user.interrupt" }] });
    await sent;
    return this.settled(before + 1);
  }

  async disconnectMidTurn(text: string): Promise<void> {
    const sent = this.h.chat.sendMessage({ text });
    await this.untilTextStreams(text);
    await this.h.chat.stop();
    await sent;
    if (!this.h.finishes.at(-1)?.isAbort) throw new Error("stop() did not end the chat's request");
  }

  async reconnect(): Promise<TurnView> {
    const before = this.h.finishes.length;
    await this.h.chat.resumeStream();
    return this.settled(before + 1);
  }

  async history(): Promise<HistoryTurn[]> {
    return historyTurns(await readHistory(this.baseUrl, this.sessionId));
  }

  async close(): Promise<void> {
    await this.h.chat.stop();
  }

  /** The view once `finishes` responses have ended and the chat is at rest. */
  private async settled(finishes: number): Promise<TurnView> {
    await this.h.waitForFinishes(finishes);
    await until(() => this.h.chat.status === "ready" || this.h.chat.status === "error");
    return this.view();
  }

  private view(): TurnView {
    const { chat } = this.h;
    const assistant = chat.messages.at(-1)?.role === "assistant" ? chat.messages.at(-1) : undefined;
    const parts = assistant?.parts ?? [];
    const toolCalls = parts.filter(isToolPart).map(toolView);
    const text = parts.flatMap((p) => (p.type === "text" && p.text !== "" ? [p.text] : [])).at(-1) ?? "";
    if (chat.status === "error") {
      return { end: "error", text, toolCalls, error: chat.error?.message ?? "" };
    }
    const chunks = this.h.chunkTypes.at(-1) ?? [];
    const reason = this.h.finishes.at(-1)?.finishReason;
    if (chunks.includes("abort")) return { end: "interrupted", text, toolCalls };
    if (reason === "tool-calls") return { end: "waiting", text, toolCalls };
    if (reason === "stop") return { end: "natural", text, toolCalls };
    throw new Error(`the chat's response ended oddly: ${chunks.join(", ")} (finish reason ${reason})`);
  }

  private toolPart(callId: string): ToolPart {
    for (const message of this.h.chat.messages) {
      const part = message.parts.filter(isToolPart).find((p) => p.toolCallId === callId);
      if (part) return part;
    }
    throw new Error(`the chat shows no call ${callId}`);
  }

  /** Until the reply to the user message `text` shows some text (not an earlier turn's). */
  private untilTextStreams(text: string): Promise<void> {
    return until(() => {
      const { messages } = this.h.chat;
      const asked = messages.findLastIndex(
        (m) => m.role === "user" && m.parts.some((p) => p.type === "text" && p.text === text),
      );
      const reply = asked === -1 ? undefined : messages[asked + 1];
      return reply?.role === "assistant" && reply.parts.some((p) => p.type === "text" && p.text !== "");
    });
  }
}

function isToolPart(part: Part): part is ToolPart {
  return part.type.startsWith("tool-") && "toolCallId" in part;
}

function toolView(part: ToolPart): ToolCallView {
  const states: Record<string, ToolCallState> = {
    "output-available": "done",
    "output-error": "done",
    "output-denied": "denied",
    "approval-requested": "awaiting_approval",
  };
  const state =
    states[part.state] ??
    (part.state === "input-available" && !part.providerExecuted ? "awaiting_result" : "incomplete");
  return { id: part.toolCallId, name: part.type.slice("tool-".length), state };
}

/** `GET /v1/ai-sdk/threads/{sessionId}/messages`: the session as UI messages. */
export async function readHistory(baseUrl: string, sessionId: string): Promise<UIMessage[]> {
  const response = await fetch(
    `${baseUrl}/v1/ai-sdk/threads/${encodeURIComponent(sessionId)}/messages?limit=1000`,
    { headers: { "x-api-key": TEST_API_KEY } },
  );
  if (response.status !== 200) throw new Error(`history read: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { items: UIMessage[] }).items;
}

/** The history read's UI messages as turns: each user message opens one. */
export function historyTurns(messages: readonly UIMessage[]): HistoryTurn[] {
  const turns: HistoryTurn[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      const user = message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      turns.push({ user, texts: [], toolCalls: [] });
      continue;
    }
    const turn = turns.at(-1);
    if (!turn) continue;
    for (const part of message.parts) {
      if (part.type === "text" && part.text !== "") turn.texts.push(part.text);
      if (isToolPart(part)) {
        turn.toolCalls.push({
          id: part.toolCallId,
          name: part.type.slice("tool-".length),
          answered: ["output-available", "output-error", "output-denied"].includes(part.state),
        });
      }
    }
  }
  return turns;
}

async function until(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("the chat never got there");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
