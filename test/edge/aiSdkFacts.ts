/**
 * Builders of committed typed facts for the AI SDK edge's pure tests: one session's thread, seq
 * counting up, ids readable in failures.
 */
import type { UIMessage, UIMessageChunk } from "ai";
import * as ai6 from "ai";
import type { CommittedTypedFact, FactPayload, ToolCall } from "../../src/coordinator/factVocabulary.js";
import type { AiSdkModule } from "../support/aiSdkClients.js";

export function thread() {
  let seq = 0;
  const fact = (payload: FactPayload, id = `f${seq + 1}`): CommittedTypedFact =>
    ({
      id,
      sessionId: "sesn_1",
      threadId: "sthr_1",
      seq: ++seq,
      createdAt: 0,
      ...payload,
    }) as CommittedTypedFact;
  return {
    fact,
    user: (text: string, clientMessageId?: string, id?: string) =>
      fact(
        {
          kind: "user_message",
          content: [{ type: "text", text }],
          ...(clientMessageId ? { clientMessageId } : {}),
        },
        id,
      ),
    running: () => fact({ kind: "status_running" }),
    requestStart: (id?: string) => fact({ kind: "model_request_start", provider: "offline", model: "m" }, id),
    requestEnd: () =>
      fact({
        kind: "model_request_end",
        startId: "x",
        isError: false,
        provider: "offline",
        model: "m",
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
        },
      }),
    say: (text: string, id?: string) =>
      fact({ kind: "agent_message", content: [{ type: "text", text }] }, id),
    call: (call: Omit<ToolCall, "id">, id: string) => fact({ kind: "tool_call", call: { ...call, id } }, id),
    result: (callId: string, text: string, options: { isError?: boolean; by?: "server" | "client" } = {}) =>
      fact({
        kind: "tool_result",
        callId,
        executor: options.by === "client" ? "client" : "server",
        by: options.by ?? "server",
        content: [{ type: "text", text }],
        isError: options.isError ?? false,
      }),
    confirm: (callId: string, allowed: boolean, denyMessage: string | null = null) =>
      fact({ kind: "tool_confirmation", callId, allowed, denyMessage }),
    idleEnd: () => fact({ kind: "status_idle", reason: { kind: "turn_ended" } }),
    idleWaiting: (callIds: string[]) => fact({ kind: "status_idle", reason: { kind: "waiting", callIds } }),
    idleExhausted: () => fact({ kind: "status_idle", reason: { kind: "retries_exhausted" } }),
    error: (message: string, retryStatus: "retrying" | "exhausted" | "terminal") =>
      fact({ kind: "error", errorType: "model_overloaded_error", message, retryStatus, extra: {} }),
    interrupt: () => fact({ kind: "interrupt" }),
  };
}

/** The client module `clientMessage` folds with (`ai` 6 until a test picks another major). */
let ai: AiSdkModule = ai6;
export function useAiSdkClient(module: AiSdkModule): void {
  ai = module;
}

/**
 * What the official client makes of these chunks: framed as SSE, parsed with its chunk schema and
 * folded by its message reader, which throws on any order it does not accept.
 */
export async function clientMessage(chunks: UIMessageChunk[], message?: UIMessage): Promise<UIMessage> {
  const sse = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("") + "data: [DONE]\n\n";
  const bytes = new Response(sse).body as ReadableStream<Uint8Array>;
  const parsed = ai.parseJsonEventStream({ stream: bytes, schema: ai.uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value as UIMessageChunk);
      },
    }),
  );
  let last: UIMessage | undefined;
  for await (const snapshot of ai.readUIMessageStream({
    stream: parsed,
    terminateOnError: true,
    ...(message ? { message } : {}),
  })) {
    last = snapshot;
  }
  if (!last) throw new Error("the client built no message");
  return last;
}
