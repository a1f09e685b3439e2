import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { newId } from "../kernel/ids.js";
import { answerAgUiError, failureOf } from "./ag-ui/agUiErrors.js";
import { agUiRoutes } from "./ag-ui/agUiRoute.js";
import { agUiPortsOf } from "./ag-ui/agUiServicePorts.js";
import { environmentKeyRoutes } from "./awaken/environmentKeyRoutes.js";
import { authenticate, authorize } from "./http/auth.js";
import { answerFrameworkError, writeClientError } from "./http/clientErrors.js";
import type { EdgeServices } from "./http/edgeServices.js";
import { healthRoutes } from "./http/healthRoutes.js";
import { installJsonBodyParser } from "./http/jsonBodyParser.js";
import { RouteMethods } from "./http/routeMethods.js";
import { installErrorEnvelope } from "./managed-agents/errorEnvelope.js";
import { agentRoutes } from "./managed-agents/routes/agentRoutes.js";
import { environmentRoutes } from "./managed-agents/routes/environmentRoutes.js";
import { eventRoutes } from "./managed-agents/routes/eventRoutes.js";
import { sessionRoutes } from "./managed-agents/routes/sessionRoutes.js";
import { vaultRoutes } from "./managed-agents/routes/vaultRoutes.js";
import { workRoutes } from "./managed-agents/routes/workRoutes.js";
import { SECRET_LOG_PATHS } from "./managed-agents/schemas/vaults.js";
import { type WorkerRouteDeps, workerTransportRoutes } from "./worker-transport/workerRoutes.js";

export interface HttpServerOptions {
  logger: FastifyBaseLogger;
  bodyLimitBytes: number;
  isReady: () => boolean;
  /** Serves remote workers when a worker token is configured; absent, the routes do not exist. */
  workerTransport?: WorkerRouteDeps | undefined;
}

/** One HTTP server for every edge. Each protocol adapter registers its own routes. */
export function createHttpServer(deps: EdgeServices, options: HttpServerOptions): FastifyInstance {
  const app = Fastify({
    // Request and child loggers inherit the redaction: credential secrets never reach a log line.
    loggerInstance: options.logger.child({}, { redact: { paths: SECRET_LOG_PATHS, censor: "[redacted]" } }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes,
    genReqId: () => newId("req"),
    // Streams stay open for hours; the SDK's 600 s timeout only covers the response headers.
    requestTimeout: 0,
    keepAliveTimeout: 65_000,
    // On shutdown, open streams are cut instead of holding the process past its stop deadline.
    forceCloseConnections: true,
    // What fails before a route is found still answers in the wire's envelope.
    clientErrorHandler: writeClientError,
    frameworkErrors: answerFrameworkError,
  });

  installJsonBodyParser(app);
  const routes = RouteMethods.track(app);
  app.addHook("onRequest", async (request, reply) => {
    reply.header("request-id", request.id);
  });
  app.addHook("onResponse", async (request, reply) => {
    request.log.debug({ method: request.method, url: request.url, status: reply.statusCode }, "request");
  });
  installErrorEnvelope(app, (path) => routes.allowed(path));
  healthRoutes(app, options.isReady);

  app.register(async (v1) => {
    // Each route declares the principals it accepts (`config.access`; API key only by default).
    v1.addHook("onRequest", async (request) => {
      const principal = await authenticate(deps, request);
      authorize(principal, request);
      request.principal = principal;
    });
    agentRoutes(v1, deps);
    environmentRoutes(v1, deps);
    sessionRoutes(v1, deps);
    eventRoutes(v1, deps);
    workRoutes(v1, deps);
    environmentKeyRoutes(v1, deps);
    vaultRoutes(v1, deps);
    // Interim until the edge adapter seam: the AG-UI edge in its own scope, answering its own errors.
    v1.register(async (scope) => {
      scope.setErrorHandler((error, request, reply) => answerAgUiError(failureOf(error), request, reply));
      agUiRoutes(scope, agUiPortsOf(deps));
    });
  });
  const workerTransport = options.workerTransport;
  if (workerTransport) app.register(async (scope) => workerTransportRoutes(scope, workerTransport));
  return app;
}
