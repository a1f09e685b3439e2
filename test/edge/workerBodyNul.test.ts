/**
 * A NUL is refused in every client's body, but a remote worker's commit carries what a tool or a
 * model produced (a binary file's text), which the server stores as an escape: the worker routes
 * take it, as the in-process worker does, while a public route on the same server refuses it.
 */
import type { FastifyInstance } from "fastify";
import { afterEach, beforeEach, expect, it } from "vitest";
import { WORKER_ROUTE_PREFIX } from "../../src/worker/transportWire.js";
import { workerRoutesApp } from "../support/workerRoutesApp.js";

const TOKEN = "worker-token-body-nul-0001";

let app: FastifyInstance;
let committed: unknown[];

beforeEach(async () => {
  ({ app, committed } = await workerRoutesApp(TOKEN));
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
