import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { approvalFeedQuerySchema } from "../schemas/workers.js";

const HINT = JSON.stringify({ type: "approvals.changed" });

/**
 * `GET /v1/awaken/approvals/stream` (runtime keys, an Awaken extension): an SSE stream that says
 * when the workspace's pending approvals may have changed (an ask appeared, a decision was made on
 * any edge or replica). It carries no data: a client reads the sessions and their events through
 * the public API when told. The first hint goes out as the stream opens, after it is listening, so
 * a read made then misses nothing. Frames: `event: approvals.changed`, and `ping` keep-alives.
 */
export function approvalFeedRoutes(app: FastifyInstance, deps: EdgeServices): void {
  app.get<{ Querystring: RawQuery }>("/v1/awaken/approvals/stream", async (request, reply) => {
    parseQuery(approvalFeedQuerySchema, request.query);
    const workspaceId = principalOf(request).workspaceId;
    reply.hijack();
    const raw = reply.raw;
    const gone = new AbortController();
    raw.on("close", () => gone.abort());
    const write = (event: string, data: string) => {
      // A slow reader gets no backlog: hints are idempotent, the next one says the same.
      if (!raw.destroyed && !raw.writableEnded && raw.writableLength === 0)
        raw.write(`event: ${event}\ndata: ${data}\n\n`);
    };
    deps.approvals.watch(workspaceId, () => write("approvals.changed", HINT), gone.signal);
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      "request-id": request.id,
    });
    write("approvals.changed", HINT);
    const ping = setInterval(() => write("ping", JSON.stringify({ type: "ping" })), deps.stream.pingMs);
    gone.signal.addEventListener("abort", () => {
      clearInterval(ping);
      raw.end();
    });
  });
}
