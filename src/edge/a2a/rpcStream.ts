import type { FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../../kernel/clock.js";
import { guardedListener } from "../http/closeListener.js";
import { SseWriter } from "../http/sseWriter.js";

/** An open SSE answer to a streaming method: one `data:` line per event (`event:` names an error). */
export interface RpcStream {
  /** Resolves when the next event may be produced: await it, so a client that stops reading pauses the task's tail. */
  write(envelope: unknown, event?: string): Promise<void>;
  end(): void;
}

export function openRpcStream(
  request: FastifyRequest,
  reply: FastifyReply,
  ping: { everyMs: number; clock: Clock },
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
  const writer = new SseWriter(reply, {
    hook: "a2a stream",
    // An SSE comment keeps proxies from timing out a quiet task.
    heartbeat: { frame: ": ping\n\n", everyMs: ping.everyMs },
    clock: ping.clock,
  });
  // The client gone, or its credential ended: either way the answer is over.
  closed.addEventListener(
    "abort",
    guardedListener("a2a stream", request.log, () => writer.end()),
    { once: true },
  );
  if (closed.aborted) writer.end();
  return {
    write(envelope, event) {
      return writer.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(envelope)}\n\n`);
    },
    end() {
      writer.end();
    },
  };
}
