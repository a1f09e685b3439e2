import type { ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import type { PresenceConnection } from "../../coordinator/workerConnections.js";
import { AwakenError } from "../../kernel/errors.js";
import { PRESENCE_HEARTBEAT_MS, PRESENCE_PATH, presenceRequestSchema } from "../../worker/presenceWire.js";
import { WORKER_ROUTE_PREFIX } from "../../worker/transportWire.js";
import { onReplyClosed } from "../http/closeListener.js";

export interface PresenceRouteDeps {
  /** This replica's record of open presence connections (`coordinator/workerConnections.ts`). */
  connections: { connected(identity: string): PresenceConnection; close(): void };
  /** The gateway's renew with the coordinator's lease. */
  renew(runId: string, owner: string, epoch: number): Promise<boolean>;
  /** Owners of this deployment's in-process workers start with it: no presence speaks for them. */
  localIdPrefix: string;
}

/**
 * `POST /v1/awaken/worker/presence`: held open for the worker's life (`worker/presenceWire.ts`).
 * Registered inside the worker transport's scope, behind its token check. The connection counts
 * from before the hello's renewals, so a lapse this replica had pending for the worker is dropped
 * first; a close of the socket afterwards, for any reason but this replica's own shutdown, is the
 * worker's drop.
 */
export function presenceRoute(app: FastifyInstance, deps: PresenceRouteDeps): void {
  const streams = new Set<ServerResponse>();
  // Before the server cuts its connections: those closes are ours, not the workers' deaths, and a
  // stream ended cleanly tells the worker to reconnect (to another replica) at once.
  app.addHook("preClose", (done) => {
    deps.connections.close();
    for (const raw of streams) raw.end();
    done();
  });
  app.post(`${WORKER_ROUTE_PREFIX}${PRESENCE_PATH}`, async (request, reply) => {
    const parsed = presenceRequestSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      throw new AwakenError("invalid_request", `Invalid worker presence request: ${parsed.error.message}`);
    }
    const { identity, held } = parsed.data;
    if (identity.startsWith(deps.localIdPrefix)) {
      throw new AwakenError(
        "invalid_request",
        `a remote worker's identity may not start with ${JSON.stringify(deps.localIdPrefix)}: that names in-process workers`,
      );
    }
    const connection = deps.connections.connected(identity);
    const raw = reply.raw;
    streams.add(raw);
    let beat: NodeJS.Timeout | undefined;
    onReplyClosed(reply, "worker presence", () => {
      clearInterval(beat);
      streams.delete(raw);
      connection.closed();
    });
    // Only its own claims: a hello cannot keep another worker's runs alive.
    const own = held.filter((claim) => claim.owner.startsWith(`${identity}/`));
    await Promise.all(own.map((claim) => deps.renew(claim.runId, claim.owner, claim.epoch)));
    reply.hijack();
    if (raw.destroyed) return;
    raw.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    // The first newline tells the worker its hello was applied.
    raw.write("\n");
    beat = setInterval(() => raw.write("\n"), PRESENCE_HEARTBEAT_MS);
  });
}
