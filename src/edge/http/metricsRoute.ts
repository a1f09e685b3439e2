import type { FastifyInstance } from "fastify";
import type { Metrics, MetricsExposition } from "../../kernel/metrics.js";
import { bearerTokenCheck } from "./bearerToken.js";
import { onReplyClosed } from "./closeListener.js";
import { defaultErrorBody } from "./defaultErrorBody.js";

/**
 * `GET /metrics` (Prometheus text format): counts by route pattern, tool, published model and
 * outcome only, never an id, key or client text. Every answered request is counted by its route
 * pattern (`/v1/sessions/:id`), never by its URL.
 */
export function metricsRoutes(
  app: FastifyInstance,
  metrics: Metrics & MetricsExposition,
  token?: string | undefined,
): void {
  app.addHook("onRequest", (request, reply, done) => {
    // On the socket's close, not `onResponse`: hijacked replies (event streams) skip that hook.
    onReplyClosed(reply, "metrics", () => {
      const route = request.routeOptions.url ?? "unmatched";
      metrics.httpRequest(route, request.method, reply.raw.statusCode, reply.elapsedTime / 1000);
    });
    done();
  });
  serveMetrics(app, metrics, token);
}

/**
 * The `GET /metrics` route alone. With `token`, a scrape must send `Authorization: Bearer <token>`
 * (compared in constant time); without it, it is open like `/healthz`, for a private network.
 */
export function serveMetrics(
  app: FastifyInstance,
  exposition: MetricsExposition,
  token?: string | undefined,
): void {
  const authorized = token === undefined ? () => true : bearerTokenCheck(token);
  app.get("/metrics", async (request, reply) => {
    if (!authorized(request.headers.authorization)) {
      return reply
        .status(401)
        .header("www-authenticate", 'Bearer realm="metrics"')
        .send(
          defaultErrorBody(
            "authentication_error",
            "GET /metrics requires the metrics token: send Authorization: Bearer <token>.",
            request.id,
          ),
        );
    }
    const text = await exposition.render();
    return reply.header("content-type", exposition.contentType).send(text);
  });
}
