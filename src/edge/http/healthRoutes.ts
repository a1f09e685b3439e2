import type { FastifyInstance } from "fastify";
import type { ReadinessProbe } from "./readiness.js";

/**
 * `GET /healthz` answers 200 once the server accepts work (liveness); `GET /readyz` answers 200
 * only while it can do work now (database, schema, workers) and 503 while draining. Neither needs
 * authentication, so neither says more than the state of each check.
 */
export function healthRoutes(app: FastifyInstance, isReady: () => boolean, readiness?: ReadinessProbe): void {
  app.get("/healthz", async (_request, reply) => {
    if (!isReady()) return reply.status(503).send({ status: "starting" });
    return { status: "ok" };
  });
  app.get("/readyz", async (_request, reply) => {
    reply.header("cache-control", "no-store");
    if (!readiness)
      return reply.status(isReady() ? 200 : 503).send({ status: isReady() ? "ready" : "starting" });
    const report = await readiness();
    const status = report.draining ? "draining" : report.ready ? "ready" : isReady() ? "unready" : "starting";
    const body = { status, checks: report.checks, ...(report.reason ? { reason: report.reason } : {}) };
    return reply.status(report.ready && !report.draining ? 200 : 503).send(body);
  });
}
