import type { FastifyBaseLogger } from "fastify";
import type { PackageResolutionRecords } from "../../coordinator/packageResolutions.js";
import type { WorkerTransport } from "../../worker/ports.js";
import type { WorkerRequest, WorkerResponse } from "../../worker/transportWire.js";
import { checkClaim, type RunSessionLookup } from "./credentialRoute.js";

export interface PackageResolutionRouteDeps {
  records: PackageResolutionRecords;
  runSession: RunSessionLookup;
  /** The environment revision a session pins (null: no such session). */
  sessionRevision(
    workspaceId: string,
    sessionId: string,
  ): Promise<{ environmentId: string; revision: number } | null>;
}

export interface PackageResolutionRouteContext {
  renew: WorkerTransport["renew"];
  leaseMs: number;
  deps: PackageResolutionRouteDeps;
  log: FastifyBaseLogger;
}

/**
 * A remote worker reads or records the frozen package resolution of the revision its run's session
 * pins. The claim is checked first (live, and a claim on that session), then that the session pins
 * the named revision: a worker can reach no other revision's record. Recording is first writer wins.
 */
export async function packageResolutionForRemoteRun(
  context: PackageResolutionRouteContext,
  request: WorkerRequest<"packageResolution">,
): Promise<WorkerResponse<"packageResolution">> {
  const { deps } = context;
  const lost = await checkClaim(context.renew, context.leaseMs, deps.runSession, request, context.log);
  if (lost) return lost;
  const pinned = await deps.sessionRevision(request.workspaceId, request.sessionId);
  if (!pinned || pinned.environmentId !== request.environmentId || pinned.revision !== request.revision) {
    context.log.warn(
      { runId: request.runId, sessionId: request.sessionId, environmentId: request.environmentId },
      "worker request refused: the session does not pin that environment revision",
    );
    return {
      kind: "claim_lost",
      reason: `session ${request.sessionId} does not pin that environment revision`,
    };
  }
  const ref = { environmentId: pinned.environmentId, revision: pinned.revision };
  const resolution =
    request.resolution === null
      ? await deps.records.recorded(ref)
      : await deps.records.record(ref, request.resolution);
  return { kind: "resolution", resolution };
}
