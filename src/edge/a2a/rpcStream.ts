import type { FastifyReply, FastifyRequest } from "fastify";

/** An open SSE answer to a streaming JSON-RPC method: one `data:` line per JSON-RPC response. */
export interface RpcStream {
  write(envelope: unknown): void;
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
  closed.addEventListener("abort", stop, { once: true });
  return {
    write(envelope) {
      if (!ended) raw.write(`data: ${JSON.stringify(envelope)}\n\n`);
    },
    end() {
      if (ended) return;
      stop();
      raw.end();
    },
  };
}
