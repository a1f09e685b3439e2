/**
 * The adapter seam: an adapter brings its routes, may bring its own authentication scheme, and
 * answers every failure of its scope — thrown errors and unknown paths under its prefix — in its
 * own shape, while the other adapters keep theirs.
 */
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNSCOPED } from "../../src/control/callerScope.js";
import type { EdgeAdapter } from "../../src/edge/http/edgeAdapter.js";
import type { EdgeServices } from "../../src/edge/http/edgeServices.js";
import { createHttpServer, EDGE_ADAPTERS } from "../../src/edge/httpServer.js";
import { AwakenError } from "../../src/kernel/errors.js";

const peerEdge: EdgeAdapter = {
  name: "peer",
  pathPrefixes: ["/v1/peer/"],
  async authenticate(_services, request) {
    if (request.headers["x-peer-token"] !== "letmein")
      throw new AwakenError("unauthenticated", "send the peer token");
    return {
      kind: "api_key",
      workspaceId: "wrkspc_peer",
      apiKeyId: "peer",
      role: "runtime",
      scope: UNSCOPED,
    };
  },
  register(app) {
    app.get("/v1/peer/hello", async (request) => ({ hello: request.principal?.workspaceId }));
    app.get("/v1/peer/missing", async () => {
      throw new AwakenError("not_found", "no such thing");
    });
  },
  answerError(failure, _request, reply) {
    reply.status(failure.status).send({ peerError: failure.category, says: failure.message });
  },
};

let app: FastifyInstance;
beforeAll(async () => {
  // No route here touches the services; the peer adapter authenticates by itself.
  const services = { stream: {} } as EdgeServices;
  app = createHttpServer(
    services,
    { logger: pino({ level: "silent" }), bodyLimitBytes: 1024, isReady: () => true },
    [...EDGE_ADAPTERS, peerEdge],
  );
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

describe("the adapter seam", () => {
  it("uses the adapter's own authentication scheme", async () => {
    const ok = await app.inject({ url: "/v1/peer/hello", headers: { "x-peer-token": "letmein" } });
    expect(ok.json()).toEqual({ hello: "wrkspc_peer" });
    const refused = await app.inject({ url: "/v1/peer/hello" });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ peerError: "unauthenticated", says: "send the peer token" });
  });

  it("answers a thrown error in the adapter's shape, the status from its category", async () => {
    const res = await app.inject({ url: "/v1/peer/missing", headers: { "x-peer-token": "letmein" } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ peerError: "not_found", says: "no such thing" });
  });

  it("answers unknown paths and wrong methods under its prefix in its shape", async () => {
    const unknown = await app.inject({ url: "/v1/peer/nothing-here" });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().peerError).toBe("not_found");
    const wrongMethod = await app.inject({ method: "DELETE", url: "/v1/peer/hello" });
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe("GET, HEAD");
    expect(wrongMethod.json().peerError).toBe("invalid");
  });

  it("leaves the other adapters' shapes alone", async () => {
    const managed = await app.inject({ url: "/v1/nothing-here" });
    expect(managed.statusCode).toBe(404);
    expect(managed.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    const aiSdk = await app.inject({ url: "/v1/ai-sdk/nothing-here" });
    expect(aiSdk.statusCode).toBe(404);
    expect(aiSdk.headers["content-type"]).toMatch(/^text\/plain/);
  });
});
