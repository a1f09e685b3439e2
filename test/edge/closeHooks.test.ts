/**
 * Per-request hooks that run when a connection closes (metrics, tracing) run outside any handler:
 * a bug there must cost that request's record, never the process serving every tenant.
 */
import { connect } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { onReplyClosed } from "../../src/edge/http/closeListener.js";
import type { EdgeServices } from "../../src/edge/http/edgeServices.js";
import { createHttpServer, EDGE_ADAPTERS, type HttpServerOptions } from "../../src/edge/httpServer.js";
import { noopMetrics } from "../../src/kernel/metrics.js";
import type { Tracing } from "../../src/kernel/tracing.js";
import { watchProcessEscapes } from "../support/processEscapes.js";

const SECRET = "sk-awaken-close-hook-secret";

let app: FastifyInstance | undefined;
const watch = watchProcessEscapes();
const { escaped, logLines } = watch;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(extra: Partial<HttpServerOptions>): Promise<string> {
  app = createHttpServer(
    { stream: { pingMs: 60_000 } } as EdgeServices,
    {
      logger: watch.logger(),
      bodyLimitBytes: 1024,
      isReady: () => true,
      ...extra,
    },
    EDGE_ADAPTERS,
  );
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  return `http://127.0.0.1:${address.port}`;
}

/** A label check that throws, as prom-client does on a polluted `Object.prototype`. */
const throwingMetrics = {
  ...noopMetrics,
  httpRequest: () => {
    throw new TypeError(`Added label "polluted" is not included in initial labelset (${SECRET})`);
  },
  contentType: "text/plain",
  render: async () => "",
};

const throwingTracing: Tracing = {
  startSpan: () => ({
    setAttributes: () => {},
    end: () => {
      throw new RangeError(`span exporter broke (${SECRET})`);
    },
  }),
  withSpan: (_span: unknown, fn: () => unknown) => fn(),
} as unknown as Tracing;

/** Lets the `close` listeners of the requests just answered run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe("request close hooks", () => {
  it("a metrics recorder that throws costs the record, not the process", async () => {
    const url = await serve({ metrics: throwingMetrics });
    for (let i = 0; i < 3; i += 1) {
      const response = await fetch(`${url}/healthz`, { headers: { authorization: `Bearer ${SECRET}` } });
      expect(response.status).toBe(200);
      await response.text();
    }
    await settle();
    expect(escaped).toEqual([]);
    // Logged once for the hook, with no request content and not the error's text.
    const failures = logLines.filter((line) => line.includes("close hook failed"));
    expect(failures).toHaveLength(1);
    expect(JSON.parse(failures[0]!)).toMatchObject({ hook: "metrics", error: "TypeError" });
    expect(logLines.join("")).not.toContain(SECRET);
  });

  it("a tracer whose span end throws costs the span, not the process", async () => {
    const url = await serve({ tracing: throwingTracing });
    for (let i = 0; i < 3; i += 1) {
      // Probes are not traced; an unknown path is (as "unmatched").
      const response = await fetch(`${url}/no-such-path`);
      expect(response.status).toBe(404);
      await response.text();
    }
    await settle();
    expect(escaped).toEqual([]);
    expect(logLines.filter((line) => line.includes('"hook":"tracing"'))).toHaveLength(1);
    expect(logLines.join("")).not.toContain(SECRET);
  });
});

describe("onReplyClosed", () => {
  it("runs for a client that hung up before the handler watched the response", async () => {
    let closed = false;
    let watched: () => void = () => {};
    const handlerWatched = new Promise<void>((resolve) => {
      watched = resolve;
    });
    const server = Fastify();
    // The handler starts watching only after an await, as one does after authenticating.
    server.get("/slow", async (_request, reply) => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      onReplyClosed(reply, "test", () => {
        closed = true;
      });
      watched();
      return reply.hijack();
    });
    await server.listen({ host: "127.0.0.1", port: 0 });
    try {
      const address = server.server.address();
      if (typeof address !== "object" || !address) throw new Error("no address");
      const socket = connect(address.port, "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write("GET /slow HTTP/1.1\r\nhost: x\r\n\r\n");
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      await handlerWatched;
      await settle();
      expect(closed).toBe(true);
    } finally {
      await server.close();
    }
  });
});
