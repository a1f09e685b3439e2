import { type AGUIEvent, EventType } from "@ag-ui/core";
import { EventEncoder } from "@ag-ui/encoder";
import type { FastifyReply, FastifyRequest } from "fastify";
import { guardedListener } from "../http/closeListener.js";
import { type CredentialDeps, credentialLifetime } from "../http/credentialLifetime.js";
import { SseWriter } from "../http/sseWriter.js";
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
  const writer = new SseWriter(reply, {
    hook: "ag-ui stream",
    // An SSE comment keeps proxies from timing out a quiet turn; protobuf framing has no such frame.
    ...(sse ? { heartbeat: { frame: ": ping\n\n", everyMs: pingMs } } : {}),
    clock: auth.clock,
  });
  writer.closed.addEventListener(
    "abort",
    () => {
      if (!ended) closed.abort();
      ended = true;
    },
    { once: true },
  );
  credentialLifetime(auth, request, writer.closed).addEventListener(
    "abort",
    guardedListener("ag-ui stream", request.log, (event: Event) => {
      if (ended) return;
      const reason = (event.target as AbortSignal).reason as Error;
      writer.end(
        encoder.encodeBinary({ type: EventType.RUN_ERROR, code: "unauthenticated", message: reason.message }),
      );
    }),
  );
  return {
    closed: closed.signal,
    async write(events: readonly AGUIEvent[]) {
      for (const event of events) {
        if (ended) return;
        await writer.write(encoder.encodeBinary(event));
      }
    },
    end() {
      if (ended) return;
      ended = true;
      writer.end();
    },
  };
}
