import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import type { LinkRouteDeps } from "../../../src/edge/control-link/linkRoutes.js";
import type { EdgeServices } from "../../../src/edge/http/edgeServices.js";
import { createHttpServer, EDGE_ADAPTERS } from "../../../src/edge/httpServer.js";
import type { WorkerRouteDeps } from "../../../src/edge/worker-transport/workerRoutes.js";

/** Anything at all but `known`: registering routes reads next to no service, the handlers do. */
function stub<T>(known: Record<string, unknown> = {}): T {
  // Every property and every call's result is another such stub.
  const handler: ProxyHandler<object> = {
    // Not a thenable: an awaited stub is itself.
    get: (_target, key) => (key === "then" ? undefined : new Proxy(() => undefined, handler)),
    apply: () => new Proxy(() => undefined, handler),
  };
  const top: ProxyHandler<object> = {
    get: (_target, key) => {
      if (key === "then") return undefined;
      return typeof key === "string" && key in known ? known[key] : new Proxy(() => undefined, handler);
    },
  };
  return new Proxy(() => undefined, top) as T;
}

const TOKEN = "a-token-of-at-least-sixteen-characters";

export interface RegisteredRoute {
  method: string;
  url: string;
}

/** The HTTP server with every optional part on, over services that are never called. */
export function stubbedServer(): FastifyInstance {
  return createHttpServer(
    stub<EdgeServices>({ stream: { pingMs: 60_000 } }),
    {
      logger: pino({ level: "silent" }),
      bodyLimitBytes: 1024 * 1024,
      isReady: () => true,
      openApi: true,
      workerTransport: stub<WorkerRouteDeps>({ token: TOKEN }),
      controlLink: stub<LinkRouteDeps>({ token: TOKEN }),
    },
    EDGE_ADAPTERS,
  );
}

/**
 * Every route that server's plugins register, as Fastify declares it, and those of `candidates`
 * registered on the root before any hook could see them (health, metrics, this document).
 */
export async function registeredRoutes(
  candidates: readonly RegisteredRoute[] = [],
): Promise<RegisteredRoute[]> {
  const app = stubbedServer();
  const routes: RegisteredRoute[] = [];
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) routes.push({ method: method.toUpperCase(), url: route.url });
  });
  await app.ready();
  for (const candidate of candidates) {
    const known = routes.some((route) => route.method === candidate.method && route.url === candidate.url);
    if (!known && app.hasRoute({ method: candidate.method as "GET", url: candidate.url }))
      routes.push(candidate);
  }
  // It never listened; its close hooks would close the stubs.
  await app.close().catch(() => undefined);
  return routes;
}
