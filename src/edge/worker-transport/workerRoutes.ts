import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AwakenError } from "../../kernel/errors.js";
import type { WorkerTransport } from "../../worker/ports.js";
import {
  requestSchema,
  WORKER_ROUTE_PREFIX,
  WORKER_ROUTES,
  type WorkerRequest,
  type WorkerResponse,
  type WorkerRouteName,
} from "../../worker/transportWire.js";

export interface WorkerRouteDeps {
  /** The coordinator side of the transport (`localWorkerGateway`): same fence, same signals. */
  gateway: WorkerTransport;
  /** The shared worker token; the routes exist only when it is configured. */
  token: string;
  /** The coordinator's lease: workers learn it from `/config` and cannot choose their own. */
  leaseMs: number;
  /** How long an idle worker waits between claims after a long-poll came back empty. */
  pollMs: number;
}

/**
 * The remote worker transport: typed claim/renew/release/commit/read/evidence calls, authenticated
 * by the shared worker token only (an API key is never accepted here). Register inside its own
 * Fastify scope so the token hook does not touch the Managed Agents routes.
 */
export function workerTransportRoutes(app: FastifyInstance, deps: WorkerRouteDeps): void {
  const expected = digest(deps.token);
  app.addHook("onRequest", async (request) => {
    const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization?.trim() ?? "");
    // Compare fixed-length digests in constant time, so neither content nor length leaks.
    if (!match?.[1] || !timingSafeEqual(digest(match[1].trim()), expected)) {
      throw new AwakenError("unauthenticated", "Invalid or missing worker token (AWAKEN_WORKER_TOKEN).");
    }
  });

  const { gateway } = deps;
  route(app, "config", async () => ({ leaseMs: deps.leaseMs, pollMs: deps.pollMs }));
  route(app, "claim", async (body, request, reply) => {
    const gone = connectionClosed(request, reply);
    let activation = await gateway.claim(body.owner, deps.leaseMs);
    if (!activation && body.waitMs > 0) {
      await wake(gateway, body.waitMs);
      if (!gone()) activation = await gateway.claim(body.owner, deps.leaseMs);
    }
    // A worker that hung up can never receive this claim: hand it back instead of letting it lapse.
    if (activation && gone()) {
      await gateway.release(activation.runId, activation.owner, activation.epoch);
      activation = null;
    }
    return { activation };
  });
  route(app, "renew", async (b) => ({
    held: await gateway.renew(b.runId, b.owner, b.epoch, deps.leaseMs),
  }));
  route(app, "release", async (b) => {
    await gateway.release(b.runId, b.owner, b.epoch);
    return {};
  });
  route(app, "commit", (b) => gateway.commit(b.op));
  route(app, "readThread", async (b) => ({ facts: await gateway.readThread(b.threadId, b.afterSeq) }));
  route(app, "evidence", async (b) => {
    for (const item of b.items) gateway.publish(item.sessionId, item.evidence);
    return {};
  });
}

function route<R extends WorkerRouteName>(
  app: FastifyInstance,
  name: R,
  handler: (
    body: WorkerRequest<R>,
    request: FastifyRequest,
    reply: FastifyReply,
  ) => Promise<WorkerResponse<R>>,
): void {
  const spec = WORKER_ROUTES[name];
  app.post(`${WORKER_ROUTE_PREFIX}${spec.path}`, async (request, reply) => {
    const parsed = requestSchema(name).safeParse(request.body ?? {});
    if (!parsed.success) {
      throw new AwakenError("invalid_request", `Invalid worker ${name} request: ${parsed.error.message}`);
    }
    return handler(parsed.data, request, reply);
  });
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** Resolves on the next dispatch signal or after `ms`, whichever comes first. */
function wake(gateway: WorkerTransport, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      off();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const off = gateway.onWork(done);
  });
}

function connectionClosed(request: FastifyRequest, reply: FastifyReply): () => boolean {
  let closed = false;
  // `close` before the response was written means the client went away mid long-poll.
  reply.raw.once("close", () => {
    if (!reply.raw.writableEnded) closed = true;
  });
  return () => closed || request.raw.socket.destroyed;
}
