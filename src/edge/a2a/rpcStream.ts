import type { FastifyReply, FastifyRequest } from "fastify";
import { guardedListener } from "../http/closeListener.js";

/** An open SSE answer to a streaming method: one `data:` line per event (`event:` names an error). */
export interface RpcStream {
  write(envelope: unknown, event?: string): void;
  end(): void;
}

export function openRpcStream(
  request: FastifyRequest,
  reply: FastifyReply,
  pingMs: number,
  closed: AbortSignal,
): RpcStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "request-id": request.id,
  });
  raw.flushHeaders();
  let ended = false;
  // An SSE comment keeps proxies from timing out a quiet task.
  const ping = setInterval(() => ended || raw.write(": ping\n\n"), pingMs);
  const stop = () => {
    ended = true;
    clearInterval(ping);
  };
  // The client gone, or its credential ended: either way the answer is over.
  closed.addEventListener(
    "abort",
    guardedListener("a2a stream", request.log, () => {
      stop();
      if (!raw.writableEnded && !raw.destroyed) raw.end();
    }),
    { once: true },
  );
  return {
    write(envelope, event) {
      if (ended) return;
      raw.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(envelope)}\n\n`);
    },
    end() {
      if (ended) return;
      stop();
      raw.end();
    },
  };
}
