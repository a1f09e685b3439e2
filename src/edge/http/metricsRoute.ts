import type { FastifyInstance } from "fastify";
import type { Metrics, MetricsExposition } from "../../kernel/metrics.js";
import { onReplyClosed } from "./closeListener.js";

/**
 * `GET /metrics` (Prometheus text format), unauthenticated like `/healthz`: it carries counts by
 * route pattern, tool, model and outcome only, never an id, key or client text. Every answered
 * request is counted by its route pattern (`/v1/sessions/:id`), never by its URL.
 */
export function metricsRoutes(app: FastifyInstance, metrics: Metrics & MetricsExposition): void {
  app.addHook("onRequest", (request, reply, done) => {
    // On the socket's close, not `onResponse`: hijacked replies (event streams) skip that hook.
    onReplyClosed(reply, "metrics", () => {
      const route = request.routeOptions.url ?? "unmatched";
      metrics.httpRequest(route, request.method, reply.raw.statusCode, reply.elapsedTime / 1000);
    });
    done();
  });
  app.get("/metrics", async (_request, reply) => {
    const text = await metrics.render();
    return reply.header("content-type", metrics.contentType).send(text);
  });
}
