/**
 * An event stream's close-time cleanup runs outside any handler, often from an `AbortSignal`'s
 * listener (whose errors `abort()` never throws: they are reported as uncaught). A bug there must
 * cost that one stream, never the process serving every tenant.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type { Principal } from "../../src/control/iamService.js";
import type { EdgeServices } from "../../src/edge/http/edgeServices.js";
import { createHttpServer } from "../../src/edge/httpServer.js";
import { managedAgentsEdge } from "../../src/edge/managed-agents/managedAgentsEdge.js";
import { watchProcessEscapes } from "../support/processEscapes.js";

const SECRET = "sk-awaken-stream-close-secret";

const KEY: Principal = {
  workspaceId: "wrkspc_default",
  apiKeyId: "key_1",
  role: "runtime",
  scope: { agentIds: null, sessionId: null, sessionNamespace: null, operations: null },
};

let app: FastifyInstance | undefined;
const watch = watchProcessEscapes();
const { escaped, logLines } = watch;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The Managed edge alone, its key accepted and its session feed quiet. */
async function serve(): Promise<string> {
  const services = {
    iam: { authenticate: async (key: string) => (key === SECRET ? KEY : null) },
    sessionChanges: { watch: () => {} },
    stream: { pingMs: 60_000 },
    clock: { now: () => Date.now() },
  } as unknown as EdgeServices;
  app = createHttpServer(services, { logger: watch.logger(), bodyLimitBytes: 1024, isReady: () => true }, [
    managedAgentsEdge,
  ]);
  // The fault: the stream's response breaks when its cleanup ends it, as a bug there would.
  app.addHook("onRequest", (request, reply, done) => {
    if (request.url.startsWith("/v1/awaken/sessions/stream")) {
      reply.raw.end = () => {
        throw new RangeError(`the response broke while ending (${SECRET})`);
      };
    }
    done();
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const address = app.server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  return `http://127.0.0.1:${address.port}`;
}

/** Opens the hint stream, reads its first hint, then hangs up. */
async function openAndLeave(url: string): Promise<void> {
  const leave = new AbortController();
  const response = await fetch(`${url}/v1/awaken/sessions/stream`, {
    headers: { authorization: `Bearer ${SECRET}` },
    signal: leave.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain("sessions.changed");
  leave.abort();
  await reader.read().catch(() => {});
}

/** Lets the `close` and abort listeners of the streams just left run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

describe("event stream close hooks", () => {
  it("a hint stream whose cleanup throws costs that stream, not the process", async () => {
    const url = await serve();
    await openAndLeave(url);
    await settle();
    expect(escaped).toEqual([]);
    // The server goes on: another stream opens (the first one's slot was released) and probes answer.
    await openAndLeave(url);
    await settle();
    expect(escaped).toEqual([]);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    await health.text();
    // Logged once for the hook, with the error's kind and nothing of the request or its text.
    const failures = logLines.filter((line) => line.includes("close hook failed"));
    expect(failures).toHaveLength(1);
    expect(JSON.parse(failures[0]!)).toMatchObject({ error: "RangeError" });
    expect(logLines.join("")).not.toContain(SECRET);
  });
});

const EDGE = fileURLToPath(new URL("../../src/edge/", import.meta.url));

/** Files that may listen for `close` themselves: the guard, and a connection (not a request) count. */
const OWN_CLOSE_LISTENERS = new Set(["http/closeListener.ts", "http/connectionLimits.ts"]);

describe("edge close listeners", () => {
  it("every edge file watches a request end through the one guard", () => {
    const files = readdirSync(EDGE, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
    const raw = files
      .map((file) => relative(EDGE, join(EDGE, file)))
      .filter((file) => !OWN_CLOSE_LISTENERS.has(file))
      .filter((file) =>
        /\.(on|once|addListener|prependListener)\(\s*"close"/.test(readFileSync(join(EDGE, file), "utf8")),
      );
    expect(raw).toEqual([]);
  });
});
