import { type AGUIEvent, EventType } from "@ag-ui/core";
import { EventEncoder } from "@ag-ui/encoder";
import type { FastifyReply, FastifyRequest } from "fastify";
import { guardedListener, onReplyClosed } from "../http/closeListener.js";
import { type CredentialDeps, credentialLifetime } from "../http/credentialLifetime.js";
import type { EventSink } from "./eventSink.js";

/**
 * Opens the run's response: SSE, or the protocol's protobuf framing when the Accept header asks
 * for it (the encoder decides; its content type is the one the client matches on). The sink's
 * `closed` aborts when the client closes the connection before the run ended it, or when the
 * credential expires or is revoked: the stream then ends with a RUN_ERROR saying so, as if the
 * client had left.
 */
export function openEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  pingMs: number,
  auth: CredentialDeps,
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
  /** Aborted when the response ends: the credential's checks stop with it. */
  const opened = new AbortController();
  // An SSE comment keeps proxies from timing out a quiet turn; protobuf framing has no such frame.
  const ping = sse ? setInterval(() => ended || raw.write(": ping\n\n"), pingMs) : null;
  const stop = () => {
    ended = true;
    if (ping) clearInterval(ping);
    opened.abort();
  };
  onReplyClosed(reply, "ag-ui stream", () => {
    const early = !ended;
    stop();
    if (early) closed.abort();
  });
  credentialLifetime(auth, request, opened.signal).addEventListener(
    "abort",
    guardedListener("ag-ui stream", request.log, (event: Event) => {
      if (ended) return;
      const reason = (event.target as AbortSignal).reason as Error;
      raw.write(
        encoder.encodeBinary({ type: EventType.RUN_ERROR, code: "unauthenticated", message: reason.message }),
      );
      stop();
      closed.abort();
      raw.end();
    }),
  );
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
