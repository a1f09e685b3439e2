import Fastify from "fastify";
import type { MetricsExposition } from "../kernel/metrics.js";
import { capConnections, connectionLimitsWith, connectionTimeouts } from "./http/connectionLimits.js";
import { serveMetrics } from "./http/metricsRoute.js";

export interface MetricsListen {
  host: string;
  port: number;
}

export interface WorkerMetricsServer {
  /** Where Prometheus scrapes it (`http://host:port/metrics`, the real port when 0 was asked for). */
  url: string;
  close(): Promise<void>;
}

/**
 * A remote worker's own `GET /metrics`: the model requests, tool calls, commits, settles and
 * sandbox realizations of the runs it executes happen in its process, so it is scraped like every
 * other process (the coordinator counts the claims it hands out). Nothing else is served: no API,
 * no authentication beyond the `token` check when set; the same label rules as the server's registry.
 */
/** A scrape is one small request: no connection holds the port open for long, and few are open. */
const SCRAPE_LIMITS = connectionLimitsWith({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 30_000,
  maxConnections: 64,
  maxConnectionsPerAddress: 64,
});

export async function startWorkerMetricsServer(
  listen: MetricsListen,
  exposition: MetricsExposition,
  token?: string | undefined,
): Promise<WorkerMetricsServer> {
  const app = Fastify({ logger: false, forceCloseConnections: true, ...connectionTimeouts(SCRAPE_LIMITS) });
  capConnections(app.server, SCRAPE_LIMITS, app.log);
  serveMetrics(app, exposition, token);
  await app.listen({ host: listen.host, port: listen.port });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : listen.port;
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  return { url: `http://${host}:${port}/metrics`, close: () => app.close() };
}
