/**
 * A NUL is refused in every client's body, but a remote worker's commit carries what a tool or a
 * model produced (a binary file's text), which the server stores as an escape: the worker routes
 * take it, as the in-process worker does, while a public route on the same server refuses it.
 */
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, beforeEach, expect, it } from "vitest";
import { classifyFailure } from "../../src/edge/http/edgeFailure.js";
import { installJsonBodyParser } from "../../src/edge/http/jsonBodyParser.js";
import { workerTransportRoutes } from "../../src/edge/worker-transport/workerRoutes.js";
import type { WorkerTransport } from "../../src/worker/ports.js";
import { WORKER_ROUTE_PREFIX } from "../../src/worker/transportWire.js";

const TOKEN = "worker-token-body-nul-0001";
const refused = () => Promise.reject(new Error("not under test"));

let app: FastifyInstance;
let committed: unknown[];

beforeEach(async () => {
  committed = [];
  const gateway = {
    commit: async (op: unknown) => {
      committed.push(op);
      return { ok: false, rejection: { kind: "stale_claim", reason: "test" } };
    },
    onWork: () => () => {},
  } as unknown as WorkerTransport;
  app = Fastify();
  installJsonBodyParser(app);
  app.setErrorHandler((error, request, reply) => {
    const failure = classifyFailure(error, request);
    void reply.status(failure.status).send({ message: failure.message });
  });
  app.register(async (scope) =>
    workerTransportRoutes(scope, {
      gateway,
      runRoster: async () => null,
      token: TOKEN,
      leaseMs: 5_000,
      pollMs: 50,
      credentials: {
        custody: { open: refused, secretVariables: refused, openSecret: refused },
        runSession: refused,
      },
    }),
  );
  app.post("/public", async (request) => request.body);
  await app.ready();
});
afterEach(async () => {
  await app.close();
});

const text = "bytes \u0000 of a binary file";
const commit = {
  op: {
    opId: "op_1",
    runId: "run_1",
    threadId: "thr_1",
    owner: "w",
    epoch: 1,
    expectedVersion: 0,
    facts: [{ id: "evt_1", type: "agent.tool_result", body: { content: [{ type: "text", text }] } }],
  },
};

it("a worker's commit may carry a NUL; a public route on the same server refuses it", async () => {
  const payload = JSON.stringify(commit);
  expect(payload).toContain("\\u0000");
  const fromWorker = await app.inject({
    method: "POST",
    url: `${WORKER_ROUTE_PREFIX}/commit`,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    payload,
  });
  expect(fromWorker.statusCode).toBe(200);
  expect(committed).toEqual([commit.op]);

  const fromClient = await app.inject({
    method: "POST",
    url: "/public",
    headers: { "content-type": "application/json" },
    payload,
  });
  expect(fromClient.statusCode).toBe(400);
  expect(fromClient.body).toContain("contains a NUL character");
});
