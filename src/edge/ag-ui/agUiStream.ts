import type { AGUIEvent } from "@ag-ui/core";
import { EventEncoder } from "@ag-ui/encoder";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { EventSink } from "./eventSink.js";

/**
 * Opens the run's response: SSE, or the protocol's protobuf framing when the Accept header asks
 * for it (the encoder decides; its content type is the one the client matches on). The sink's
 * `closed` aborts when the client closes the connection before the run ended it.
 */
export function openEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  pingMs: number,
): EventSink & { end(): void } {
  const accept = request.headers.accept;
  const encoder = new EventEncoder(typeof accept === "string" ? { accept } : {});
  const contentType = encoder.getContentType();
  const sse = contentType === "text/event-stream";
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": contentType,
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "request-id": request.id,
  });
  raw.flushHeaders();
  const closed = new AbortController();
  let ended = false;
  // An SSE comment keeps proxies from timing out a quiet turn; protobuf framing has no such frame.
  const ping = sse ? setInterval(() => ended || raw.write(": ping\n\n"), pingMs) : null;
  const stop = () => {
    ended = true;
    if (ping) clearInterval(ping);
  };
  raw.on("close", () => {
    const early = !ended;
    stop();
    if (early) closed.abort();
  });
  return {
    closed: closed.signal,
    write(events: readonly AGUIEvent[]) {
      if (ended) return;
      for (const event of events) raw.write(encoder.encodeBinary(event));
    },
    end() {
      if (ended) return;
      stop();
      raw.end();
    },
  };
}
