import type { UIMessageChunk } from "ai";
import type { FastifyReply, FastifyRequest } from "fastify";
import { guardedListener, onReplyClosed } from "../http/closeListener.js";
import { type CredentialDeps, credentialLifetime } from "../http/credentialLifetime.js";

/** The response headers the UI message stream protocol asks for. */
export const UI_MESSAGE_STREAM_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
} as const;

export interface UiMessageSse {
  write(chunks: readonly UIMessageChunk[]): void;
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
  const closed = new AbortController();
  const ping = setInterval(() => {
    if (!closed.signal.aborted) raw.write(": ping\n\n");
  }, pingMs);
  const stop = () => {
    clearInterval(ping);
    closed.abort();
  };
  onReplyClosed(reply, "ai-sdk stream", stop);
  credentialLifetime(auth, request, closed.signal).addEventListener(
    "abort",
    guardedListener("ai-sdk stream", request.log, (event: Event) => {
      if (closed.signal.aborted) return;
      const reason = (event.target as AbortSignal).reason as Error;
      raw.end(`data: ${JSON.stringify({ type: "error", errorText: reason.message })}\n\ndata: [DONE]\n\n`);
      stop();
    }),
  );
  return {
    signal: closed.signal,
    write(chunks) {
      if (closed.signal.aborted || chunks.length === 0) return;
      raw.write(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join(""));
    },
    end() {
      if (!closed.signal.aborted) raw.end("data: [DONE]\n\n");
      stop();
    },
  };
}
