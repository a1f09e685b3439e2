import type { FastifyInstance, FastifyRequest } from "fastify";
import { WORKER_ROUTE_PREFIX } from "../../worker/transportWire.js";
import { AuthFailureLog } from "./authFailureLog.js";
import { onReplyClosed } from "./closeListener.js";

/** Probes and scrapes: frequent and no part of any client's work, so their line is a debug line. */
const QUIET_ROUTES = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * One line per request once its connection closes (so an event stream is logged when it ends):
 * request id (`reqId`), method, route pattern (never the URL: a query may carry anything), status,
 * duration, and who called (workspace and key id, never a key, token, header or body). Probes,
 * scrapes and remote workers' transport calls (their claim polls) log at debug, the rest at info.
 * A 401 is also a failed authentication, logged at warn under a per-source rate limit.
 */
export function logRequests(app: FastifyInstance, authFailures = new AuthFailureLog()): void {
  app.addHook("onRequest", (request, reply, done) => {
    onReplyClosed(reply, "request-log", () => {
      const route = request.routeOptions.url ?? "unmatched";
      const status = reply.raw.statusCode;
      const line = {
        method: request.method,
        route,
        status,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        ...(reply.raw.writableFinished ? {} : { closedEarly: true }),
        ...caller(request),
      };
      if (QUIET_ROUTES.has(route) || route.startsWith(WORKER_ROUTE_PREFIX))
        request.log.debug(line, "request");
      else request.log.info(line, "request");
      if (status === 401) authFailures.record(request.log, request.ip, { route, method: request.method });
    });
    done();
  });
}

/** The authenticated caller's ids (none before authentication or when it failed). */
function caller(request: FastifyRequest): Record<string, string> {
  const principal = request.principal;
  if (!principal) return {};
  switch (principal.kind) {
    case "api_key":
      return {
        workspaceId: principal.workspaceId,
        keyId: principal.apiKeyId,
        ...(principal.accessTokenId !== undefined ? { accessTokenId: principal.accessTokenId } : {}),
      };
    case "environment_key":
      return { workspaceId: principal.workspaceId, keyId: principal.keyId };
    case "sessions_token":
      return { workspaceId: principal.workspaceId, workId: principal.workId };
  }
}
