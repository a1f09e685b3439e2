import type { FastifyRequest } from "fastify";
import type { AppendPrecondition } from "../../coordinator/ports.js";
import { WorkQueueService } from "../../coordinator/workQueueService.js";
import { principalOf, type RouteAccess } from "../http/auth.js";

/**
 * The session routes a work item's sessions token may call besides its own heartbeat and stop: the
 * ones the SDK's EnvironmentWorker and SessionToolRunner use (wire §3.5, §4) — retrieve, events
 * list, stream and send — for the token's own session only, while its delivery is current. Those
 * routes declare this access in their own `config`.
 */
export const SESSION_SCOPED: RouteAccess = {
  accepts: ["api_key", "sessions_token"],
  sessionParam: "id",
  liveLease: true,
};

/**
 * A send under a sessions token must still hold its work lease when its events are appended: the
 * token's (work id, epoch) travels into the ledger's transaction as a precondition, so a worker whose
 * lease lapsed, was stopped or was re-delivered gets a 412 `work_lease_lost` and nothing is appended.
 */
export function sendPrecondition(request: FastifyRequest): AppendPrecondition | undefined {
  const principal = principalOf(request);
  return principal.kind === "sessions_token" ? WorkQueueService.leasePrecondition(principal) : undefined;
}
