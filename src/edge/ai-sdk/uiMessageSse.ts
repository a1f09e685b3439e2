import type { UIMessageChunk } from "ai";
import type { FastifyReply, FastifyRequest } from "fastify";
import { guardedListener } from "../http/closeListener.js";
import { type CredentialDeps, credentialLifetime } from "../http/credentialLifetime.js";
import { SseWriter } from "../http/sseWriter.js";

/** The response headers the UI message stream protocol asks for. */
export const UI_MESSAGE_STREAM_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
} as const;

export interface UiMessageSse {
  /** Resolves when the next chunks may be produced: await it, so a client that stops reading pauses the turn's tail. */
  write(chunks: readonly UIMessageChunk[]): Promise<void>;
  /** Writes the protocol's `[DONE]` and ends the response. */
  end(): void;
  /**
   * Aborts when the client goes away, or when the credential ends (the stream's last chunk then
   * says so): the caller stops reading, the session's run goes on.
   */
  readonly signal: AbortSignal;
}

/**
 * Takes over the reply and writes UI message chunks as SSE (`data: {json}`). A comment line every
 * `pingMs` keeps proxies from cutting a stream that waits on a long tool run; the client's parser
 * skips comments. The stream ends, with an `error` chunk, when its credential expires or is revoked.
 */
export function openUiMessageSse(
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string>,
  pingMs: number,
  auth: CredentialDeps,
): UiMessageSse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { ...UI_MESSAGE_STREAM_HEADERS, "request-id": request.id, ...headers });
  raw.flushHeaders();
  const writer = new SseWriter(reply, {
    hook: "ai-sdk stream",
    heartbeat: { frame: ": ping\n\n", everyMs: pingMs },
    clock: auth.clock,
  });
  credentialLifetime(auth, request, writer.closed).addEventListener(
    "abort",
    guardedListener("ai-sdk stream", request.log, (event: Event) => {
      if (writer.closed.aborted) return;
      const reason = (event.target as AbortSignal).reason as Error;
      writer.end(`data: ${JSON.stringify({ type: "error", errorText: reason.message })}\n\ndata: [DONE]\n\n`);
    }),
  );
  return {
    signal: writer.closed,
    write(chunks) {
      if (chunks.length === 0) return Promise.resolve();
      return writer.write(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(""));
    },
    end() {
      if (!writer.closed.aborted) writer.end("data: [DONE]\n\n");
    },
  };
}
