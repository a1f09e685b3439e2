import Fastify from "fastify";
import type { MetricsExposition } from "../kernel/metrics.js";

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
 * no authentication to get wrong; the same label rules as the server's registry.
 */
export async function startWorkerMetricsServer(
  listen: MetricsListen,
  exposition: MetricsExposition,
): Promise<WorkerMetricsServer> {
  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.get("/metrics", async (_request, reply) =>
    reply.header("content-type", exposition.contentType).send(await exposition.render()),
  );
  await app.listen({ host: listen.host, port: listen.port });
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : listen.port;
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  return { url: `http://${host}:${port}/metrics`, close: () => app.close() };
}
