import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { newId } from "../kernel/ids.js";
import type { Metrics, MetricsExposition } from "../kernel/metrics.js";
import type { Tracing } from "../kernel/tracing.js";
import { a2aEdge } from "./a2a/a2aEdge.js";
import { agUiEdge } from "./ag-ui/agUiEdge.js";
import { aiSdkEdge } from "./ai-sdk/aiSdkEdge.js";
import { type LinkRouteDeps, linkRoutes } from "./control-link/linkRoutes.js";
import { type AuthDeps, authenticate, authorize } from "./http/auth.js";
import { answerFrameworkError, writeClientError } from "./http/clientErrors.js";
import {
  type ConnectionLimits,
  capConnections,
  checkConnectionLimits,
  connectionLimitsWith,
  connectionTimeouts,
} from "./http/connectionLimits.js";
import type { ConsoleAssets } from "./http/consoleAssets.js";
import { consoleRoutes } from "./http/consoleRoutes.js";
import type { EdgeAdapter } from "./http/edgeAdapter.js";
import { classifyFailure } from "./http/edgeFailure.js";
import type { EdgeServices, UserProfilesPort } from "./http/edgeServices.js";
import { healthRoutes } from "./http/healthRoutes.js";
import { installJsonBodyParser } from "./http/jsonBodyParser.js";
import { metricsRoutes } from "./http/metricsRoute.js";
import type { ReadinessProbe } from "./http/readiness.js";
import { logRequests } from "./http/requestLog.js";
import { traceRequests } from "./http/requestTracing.js";
import { RouteMethods } from "./http/routeMethods.js";
import { userProfileActionRoutes } from "./http/userProfileActionRoutes.js";
import { managedAgentsEdge } from "./managed-agents/managedAgentsEdge.js";
import { SECRET_LOG_PATHS } from "./managed-agents/schemas/vaults.js";
import { mcpEdge } from "./mcp/mcpEdge.js";
import { openApiRoute } from "./openapi/openApiRoute.js";
import { type BuildWorkerRouteDeps, buildWorkerRoutes } from "./worker-transport/buildWorkerRoutes.js";
import { type WorkerRouteDeps, workerTransportRoutes } from "./worker-transport/workerRoutes.js";

export interface HttpServerOptions {
  logger: FastifyBaseLogger;
  bodyLimitBytes: number;
  isReady: () => boolean;
  /** `GET /readyz`: database, schema and workers; absent, it follows `isReady`. */
  readiness?: ReadinessProbe | undefined;
  /** Serves remote workers when a worker token is configured; absent, the routes do not exist. */
  workerTransport?: WorkerRouteDeps | undefined;
  /** Serves build workers when a build worker token is configured; absent, the routes do not exist. */
  buildWorkers?: BuildWorkerRouteDeps | undefined;
  /** The private Control↔Coordinator link this side serves (AWAKEN_CONTROL_TOKEN); absent, no route. */
  controlLink?: LinkRouteDeps | undefined;
  /** Counts every request and serves `GET /metrics`; absent, neither happens. */
  metrics?: (Metrics & MetricsExposition) | undefined;
  /** The bearer token `GET /metrics` requires; absent, it is open. */
  metricsToken?: string | undefined;
  /** A server span for every request (continuing a valid `traceparent`); absent, none. */
  tracing?: Tracing | undefined;
  /** Serves the Console at `/console` (null: built nowhere, it says so); absent, no route. */
  console?: ConsoleAssets | null | undefined;
  /** Serves `GET /v1/openapi.json`, the document of the whole public API (not Control's door's part). */
  openApi?: boolean | undefined;
  /** Time and count bounds on client connections; each absent one takes its default. */
  connections?: Partial<ConnectionLimits> | undefined;
  /** Serves the landing of user profiles' action and enrollment URLs (no API key); absent, no route. */
  userProfileActions?: Pick<UserProfilesPort, "openActionUrl"> | undefined;
}

/** Every client protocol the server speaks. The first is the default for paths no other owns. */
export const EDGE_ADAPTERS: readonly EdgeAdapter[] = [
  managedAgentsEdge,
  aiSdkEdge,
  agUiEdge,
  a2aEdge,
  mcpEdge,
];

/**
 * One HTTP server for every edge. Each protocol adapter gets its own scope: the shared API-key
 * authentication, its routes, and its own error shape for everything that fails inside it.
 */
export function createHttpServer<S extends AuthDeps = EdgeServices>(
  services: S,
  options: HttpServerOptions,
  adapters: readonly EdgeAdapter<S>[],
): FastifyInstance {
  const limits = connectionLimitsWith(options.connections);
  checkConnectionLimits(limits);
  const app = Fastify({
    // Request and child loggers inherit the redaction: credential secrets never reach a log line.
    loggerInstance: options.logger.child({}, { redact: { paths: SECRET_LOG_PATHS, censor: "[redacted]" } }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimitBytes,
    genReqId: () => newId("req"),
    ...connectionTimeouts(limits),
    // On shutdown, open streams are cut instead of holding the process past its stop deadline.
    forceCloseConnections: true,
    // What fails before a route is found still answers in an error envelope.
    clientErrorHandler: writeClientError,
    frameworkErrors: answerFrameworkError,
  });

  capConnections(app.server, limits, app.log);
  installJsonBodyParser(app);
  const routes = RouteMethods.track(app);
  // Callback-style hooks: an async one costs a promise and a microtask hop on every request.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("request-id", request.id);
    done();
  });
  logRequests(app);
  const owner = (path: string) => adapterFor(adapters, path);
  app.setErrorHandler((error, request, reply) =>
    owner(request.url).answerError(classifyFailure(error, request), request, reply),
  );
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const allowed = routes.allowed(path);
    const adapter = owner(path);
    if (allowed.length === 0) {
      return adapter.answerError(notFound(`No route for ${request.method} ${path}.`, 404), request, reply);
    }
    reply.header("allow", allowed.join(", "));
    return adapter.answerError(
      {
        ...notFound(`${request.method} is not allowed on ${path}; use ${allowed.join(", ")}.`, 405),
        category: "invalid",
      },
      request,
      reply,
    );
  });
  if (options.tracing) traceRequests(app, options.tracing);
  healthRoutes(app, options.isReady, options.readiness);
  if (options.openApi) openApiRoute(app);
  if (options.metrics) metricsRoutes(app, options.metrics, options.metricsToken);
  if (options.console !== undefined) consoleRoutes(app, options.console);
  if (options.userProfileActions) userProfileActionRoutes(app, options.userProfileActions);

  for (const adapter of adapters) {
    app.register(async (scope) => {
      // Each route declares the principals it accepts (`config.access`; API key only by default).
      scope.addHook("onRequest", async (request) => {
        const principal = await (adapter.authenticate ?? authenticate)(services, request);
        authorize(principal, request, adapter.roleFor?.(request) ?? "runtime");
        request.principal = principal;
      });
      scope.setErrorHandler((error, request, reply) =>
        adapter.answerError(classifyFailure(error, request), request, reply),
      );
      adapter.register(scope, services);
    });
  }
  const workerTransport = options.workerTransport;
  if (workerTransport) app.register(async (scope) => workerTransportRoutes(scope, workerTransport));
  const buildWorkers = options.buildWorkers;
  if (buildWorkers) app.register(async (scope) => buildWorkerRoutes(scope, buildWorkers));
  const controlLink = options.controlLink;
  if (controlLink) app.register(async (scope) => linkRoutes(scope, controlLink));
  return app;
}

/** The adapter owning `path`: the longest matching prefix; the first adapter owns the rest. */
function adapterFor<S>(adapters: readonly EdgeAdapter<S>[], path: string): EdgeAdapter<S> {
  let best = adapters[0]!;
  let length = -1;
  for (const adapter of adapters) {
    for (const prefix of adapter.pathPrefixes) {
      if (path.startsWith(prefix) && prefix.length > length) {
        best = adapter;
        length = prefix.length;
      }
    }
  }
  return best;
}

function notFound(message: string, status: number) {
  return { status, category: "not_found" as const, code: "not_found", message, retryable: false };
}
