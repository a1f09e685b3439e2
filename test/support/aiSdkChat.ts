/**
 * The official AI SDK chat (`AbstractChat` + `DefaultChatTransport` from `ai`) in Node, pointed at
 * the server's AI SDK edge: what a `useChat` page does, with a plain state object instead of React.
 * Each function takes the client module (`ai` 6 or 7, see aiSdkClients.ts); 6 when none is given.
 */

import type { AbstractChat, ChatInit, ChatState, ChatStatus, UIMessage, UIMessageChunk } from "ai";
import * as ai6 from "ai";
import type { AiSdkModule } from "./aiSdkClients.js";

export const AI_SDK_CHAT_PATH = "/v1/ai-sdk/chat";

class NodeChatState implements ChatState<UIMessage> {
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  messages: UIMessage[];

  constructor(messages: UIMessage[] = []) {
    this.messages = messages;
  }

  pushMessage = (message: UIMessage) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The framework-neutral chat of `ai`, holding its state in a plain object. */
export type NodeChat = AbstractChat<UIMessage>;

/** `AbstractChat` of the given client module, its state in a plain object. */
function nodeChat(ai: AiSdkModule, init: ChatInit<UIMessage>): NodeChat {
  const { messages, ...rest } = init;
  class Chat extends ai.AbstractChat<UIMessage> {}
  return new Chat({ ...rest, state: new NodeChatState(messages) });
}

export interface AiSdkChatOptions
  extends Omit<ChatInit<UIMessage>, "transport" | "messages" | "onFinish" | "onError"> {
  /** The server's base URL (absolute: Node's fetch has no page to resolve a relative one against). */
  baseUrl: string;
  apiKey: string;
  /** Extra request body fields: `agentId` (and `environmentId`) start the chat's session. */
  body?: Record<string, unknown>;
  messages?: UIMessage[];
  /** Use the default full-replay resume (true) or a resume that sends only the rest. */
  resumeStreamIsReplay?: boolean;
  /** The client module (`ai` 6 when not given). */
  ai?: AiSdkModule;
}

export interface AiSdkChat {
  chat: NodeChat;
  /** Every `onFinish` the chat reported, in order. */
  finishes: Array<Parameters<NonNullable<ChatInit<UIMessage>["onFinish"]>>[0]>;
  errors: Error[];
  /** Resolves once `count` responses have finished (streams ended, aborted or failed). */
  waitForFinishes(count: number, timeoutMs?: number): Promise<void>;
  /** The session id the server named in its last streamed response. */
  sessionId(): string | undefined;
  /**
   * The chunk types of every streamed response, in order (complete once that response finished):
   * what the chat's state does not keep, such as a server-sent `abort`.
   */
  chunkTypes: string[][];
}

export function aiSdkChat(options: AiSdkChatOptions): AiSdkChat {
  const { baseUrl, apiKey, body, messages, resumeStreamIsReplay, ai = ai6, ...init } = options;
  const finishes: AiSdkChat["finishes"] = [];
  const errors: Error[] = [];
  const waiters = new Set<() => void>();
  const chunkTypes: string[][] = [];
  let lastSessionId: string | undefined;
  const observingFetch: typeof fetch = async (input, request) => {
    const response = await fetch(input, request);
    const sessionId = response.headers.get("x-awaken-session-id");
    if (sessionId) lastSessionId = sessionId;
    if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
      return response;
    }
    const [forChat, forRecord] = response.body.tee();
    const types: string[] = [];
    chunkTypes.push(types);
    void recordChunkTypes(ai, forRecord, types);
    return new Response(forChat, { status: response.status, headers: response.headers });
  };
  const chat = nodeChat(ai, {
    ...init,
    ...(messages ? { messages } : {}),
    transport: new ai.DefaultChatTransport({
      api: `${baseUrl}${AI_SDK_CHAT_PATH}`,
      headers: { "x-api-key": apiKey },
      fetch: observingFetch,
      ...(body ? { body } : {}),
      ...(resumeStreamIsReplay !== undefined ? { resumeStreamIsReplay } : {}),
    }),
    onFinish: (event) => {
      finishes.push(event);
      for (const wake of waiters) wake();
    },
    onError: (error) => {
      errors.push(error);
    },
  });
  return {
    chat,
    finishes,
    errors,
    chunkTypes,
    sessionId: () => lastSessionId,
    waitForFinishes(count, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (finishes.length < count) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(`expected ${count} finished responses, saw ${finishes.length} (status ${chat.status})`),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
  };
}

/** Reads one response branch to its end, noting each chunk's type; a broken stream just stops. */
async function recordChunkTypes(
  ai: AiSdkModule,
  stream: ReadableStream<Uint8Array>,
  types: string[],
): Promise<void> {
  try {
    const reader = ai.parseJsonEventStream({ stream, schema: ai.uiMessageChunkSchema }).getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value.success) types.push((value.value as UIMessageChunk).type);
    }
  } catch {
    // The chat's own branch reports the failure; the record keeps what arrived.
  }
}

/**
 * The chunks of a raw AI SDK response, parsed with the client's own schema; `onChunk` sees each as
 * it arrives (for a test that acts mid-stream).
 */
export async function readChunks(
  response: Response,
  onChunk?: (chunk: UIMessageChunk) => void,
  ai: AiSdkModule = ai6,
): Promise<UIMessageChunk[]> {
  if (!response.body) return [];
  const chunks: UIMessageChunk[] = [];
  const reader = ai
    .parseJsonEventStream({ stream: response.body, schema: ai.uiMessageChunkSchema })
    .getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return chunks;
    if (!value.success) throw value.error;
    chunks.push(value.value as UIMessageChunk);
    onChunk?.(value.value as UIMessageChunk);
  }
}

/** A UI message's parts as tests compare them: what a chat shows, without streaming bookkeeping. */
export function partsOf(message: UIMessage | undefined) {
  return (message?.parts ?? []).map((p) => {
    const part = p as Record<string, unknown>;
    return Object.fromEntries(
      ["type", "state", "text", "toolCallId", "input", "output", "errorText"]
        .filter((key) => part[key] !== undefined)
        .map((key) => [key, part[key]]),
    );
  });
}
