import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { newId } from "../../kernel/ids.js";
import type { Metrics, MetricsExposition } from "../../kernel/metrics.js";
import {
  capConnections,
  connectionLimitsWith,
  connectionTimeouts,
  DEFAULT_CONNECTION_LIMITS,
} from "../http/connectionLimits.js";
import { healthRoutes } from "../http/healthRoutes.js";
import { metricsRoutes } from "../http/metricsRoute.js";
import type { ReadinessProbe } from "../http/readiness.js";
import { type LinkRouteDeps, linkRoutes } from "./linkRoutes.js";

export interface ControlHttpOptions {
  logger: FastifyBaseLogger;
  isReady: () => boolean;
  readiness: ReadinessProbe;
  metrics: Metrics & MetricsExposition;
  /** The bearer token `GET /metrics` requires; absent, it is open. */
  metricsToken?: string | undefined;
  link: LinkRouteDeps;
}

/**
 * Control's own HTTP server when it runs apart: the private link the Coordinator calls, and the
 * health, readiness and metrics routes an orchestrator reads. No public API: clients reach
 * Control's routes through the Coordinator, which forwards them over the link.
 */
export function createControlHttpServer(options: ControlHttpOptions): FastifyInstance {
  // Only Coordinators connect here, so one address may hold every connection.
  const limits = connectionLimitsWith({ maxConnectionsPerAddress: DEFAULT_CONNECTION_LIMITS.maxConnections });
  const app = Fastify({
    // Credential inputs cross this server (vault ingress): no request line or body is ever logged.
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 32 * 1024 * 1024,
    genReqId: () => newId("req"),
    forceCloseConnections: true,
    ...connectionTimeouts(limits),
  });
  capConnections(app.server, limits, app.log);
  healthRoutes(app, options.isReady, options.readiness);
  metricsRoutes(app, options.metrics, options.metricsToken);
  app.register(async (scope) => linkRoutes(scope, options.link));
  return app;
}
