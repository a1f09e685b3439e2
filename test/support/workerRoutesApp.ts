import Fastify, { type FastifyInstance } from "fastify";
import type { CommitOperation } from "../../src/coordinator/commitOperation.js";
import { classifyFailure } from "../../src/edge/http/edgeFailure.js";
import { installJsonBodyParser } from "../../src/edge/http/jsonBodyParser.js";
import { type WorkerRouteDeps, workerTransportRoutes } from "../../src/edge/worker-transport/workerRoutes.js";
import type { WorkerTransport } from "../../src/worker/ports.js";

const refused = () => Promise.reject(new Error("not under test"));

/**
 * The worker transport's routes alone on a Fastify app, with the server's body parser and error
 * mapping, and a gateway that records every commit it is handed (and refuses it as stale).
 */
export async function workerRoutesApp(
  token: string,
  runAgent: WorkerRouteDeps["runAgent"] = async () => null,
): Promise<{ app: FastifyInstance; committed: CommitOperation[] }> {
  const committed: CommitOperation[] = [];
  const gateway = {
    commit: async (op: CommitOperation) => {
      committed.push(op);
      return { ok: false, rejection: { kind: "stale_claim", reason: "test" } };
    },
    onWork: () => () => {},
  } as unknown as WorkerTransport;
  const app = Fastify();
  installJsonBodyParser(app);
  app.setErrorHandler((error, request, reply) => {
    const failure = classifyFailure(error, request);
    void reply.status(failure.status).send({ message: failure.message });
  });
  app.register(async (scope) =>
    workerTransportRoutes(scope, {
      gateway,
      runAgent,
      token,
      leaseMs: 5_000,
      pollMs: 50,
      credentials: {
        custody: { open: refused, secretVariables: refused, openSecret: refused },
        runSession: refused,
      },
    }),
  );
  return { app, committed };
}
