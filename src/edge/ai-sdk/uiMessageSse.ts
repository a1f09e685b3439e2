import type { UIMessageChunk } from "ai";
import type { FastifyReply, FastifyRequest } from "fastify";

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
  /** Aborts when the client goes away: the caller stops reading, the session's run goes on. */
  readonly signal: AbortSignal;
}

/**
 * Takes over the reply and writes UI message chunks as SSE (`data: {json}`). A comment line every
 * `pingMs` keeps proxies from cutting a stream that waits on a long tool run; the client's parser
 * skips comments.
 */
export function openUiMessageSse(
  request: FastifyRequest,
  reply: FastifyReply,
  headers: Record<string, string>,
  pingMs: number,
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
  raw.on("close", stop);
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
