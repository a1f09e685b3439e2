import type { FastifyInstance, FastifyRequest } from "fastify";
import { traceContextFromHeaders } from "../../kernel/traceContext.js";
import type { TraceSpan, Tracing } from "../../kernel/tracing.js";
import { WORKER_ROUTE_PREFIX } from "../../worker/transportWire.js";
import { onReplyClosed } from "./closeListener.js";

/** Probes and scrapes: frequent, and no part of any turn. */
const UNTRACED = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * One server span per HTTP request, for every edge at once: it continues the caller's W3C
 * `traceparent` (a malformed one is ignored: the request starts a new trace) and is active while
 * the route runs, so the run an input starts stores it and the worker's claim continues it. Named
 * by route pattern (`POST /v1/sessions/:id/events`), never by URL; no header or body is recorded.
 * Worker transport calls are traced only inside a worker's trace (its commits and reads, never its
 * idle claim polls and renewals).
 */
export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  const spans = new WeakMap<FastifyRequest, TraceSpan>();
  app.addHook("onRequest", (request, reply, done) => {
    const route = request.routeOptions.url ?? "unmatched";
    if (UNTRACED.has(route)) return done();
    const parent = traceContextFromHeaders(request.headers.traceparent, request.headers.tracestate);
    if (parent === null && route.startsWith(WORKER_ROUTE_PREFIX)) return done();
    const span = tracing.startSpan(
      `${request.method} ${route}`,
      "server",
      { "http.request.method": request.method, "http.route": route, "url.scheme": request.protocol },
      parent,
    );
    spans.set(request, span);
    // On the socket's close, not `onResponse`: hijacked replies (event streams) skip that hook.
    onReplyClosed(reply, "tracing", () => {
      const status = reply.raw.statusCode;
      span.setAttributes({ "http.response.status_code": status });
      span.end(status >= 500 ? String(status) : undefined);
    });
    tracing.withSpan(span, done);
  });
  // The body parser's stream callbacks lose the active span; the route's handler gets it back here.
  app.addHook("preHandler", (request, _reply, done) => {
    const span = spans.get(request);
    if (span) tracing.withSpan(span, done);
    else done();
  });
}
