import type { FastifyBaseLogger } from "fastify";
import { AwakenError } from "../../kernel/errors.js";
import { type ResourceClaim, ResourceClaimLostError, type RunResources } from "../../resources/ports.js";
import type { WorkerTransport } from "../../worker/ports.js";
import { MAX_WIRE_BLOB_BYTES, type WorkerRequest, type WorkerResponse } from "../../worker/transportWire.js";
import { base64ThenZeroed, type ClaimLost, checkClaim, type RunSessionLookup } from "./credentialRoute.js";

/** What the resource routes answer through: the in-process clients a local run gets. */
export interface ResourceRouteDeps {
  /** The same claim-scoped `RunResources` the coordinator's own runs use (never a store). */
  resources: RunResources;
  runSession: RunSessionLookup;
}

export interface ResourceRouteContext {
  renew: WorkerTransport["renew"];
  leaseMs: number;
  deps: ResourceRouteDeps;
  log: FastifyBaseLogger;
}

type ResourceRoute = "resolveResources" | "readBlob" | "memorySnapshot" | "writeMemory" | "repositoryToken";

/**
 * A remote run's `RunResources` calls. Each checks the claim first with the credential routes' own
 * check (`checkClaim`: a live claim of this owner at this epoch, on a run of the session named),
 * and answers `claim_lost` having read nothing otherwise; then it asks the in-process `RunResources`
 * under that same claim, which scopes every answer to the claimed session (a blob no resource or
 * pinned skill of it references is `none`, another session's store is refused) and checks the
 * claim again where it writes (the memory write-back's transaction). A claim that lapses between
 * the two checks is `claim_lost` as well.
 */
export const resourceRoutes = {
  async resolveResources(context, request) {
    return answered(context, request, async (claim) => ({
      kind: "resolved",
      ...(await context.deps.resources.resolve(claim)),
    }));
  },

  async readBlob(context, request) {
    return answered(context, request, async (claim) => {
      const bytes = await context.deps.resources.readBlob(claim, request.digest);
      if (bytes === null) return { kind: "none" };
      if (bytes.length > MAX_WIRE_BLOB_BYTES) {
        bytes.fill(0);
        throw new AwakenError(
          "payload_too_large",
          `blob ${request.digest} is ${bytes.length} bytes; a remote worker reads at most ${MAX_WIRE_BLOB_BYTES}`,
        );
      }
      return { kind: "blob", data: bytes.toString("base64") };
    });
  },

  async memorySnapshot(context, request) {
    return answered(context, request, async (claim) => ({
      kind: "snapshot",
      entries: await context.deps.resources.memorySnapshot(claim, request.memoryStoreId),
    }));
  },

  async writeMemory(context, request) {
    return answered(context, request, async (claim) => ({
      kind: "written",
      outcomes: await context.deps.resources.writeMemory(claim, request.memoryStoreId, request.changes),
    }));
  },

  // The token crosses once, for the clone on the worker's host; zeroed here as soon as encoded.
  async repositoryToken(context, request) {
    return answered(context, request, async (claim) => {
      const token = await context.deps.resources.repositoryToken(claim, request.resourceId);
      return token === null ? { kind: "none" } : { kind: "token", token: base64ThenZeroed(token) };
    });
  },
} satisfies {
  [R in ResourceRoute]: (
    context: ResourceRouteContext,
    request: WorkerRequest<R>,
  ) => Promise<WorkerResponse<R>>;
};

/** The claim check first, then the answer; a claim the in-process clients find lost is `claim_lost`. */
async function answered<T>(
  context: ResourceRouteContext,
  request: ResourceClaim,
  answer: (claim: ResourceClaim) => Promise<T>,
): Promise<T | ClaimLost> {
  const lost = await checkClaim(
    context.renew,
    context.leaseMs,
    context.deps.runSession,
    request,
    context.log,
  );
  if (lost) return lost;
  const claim: ResourceClaim = {
    workspaceId: request.workspaceId,
    sessionId: request.sessionId,
    runId: request.runId,
    owner: request.owner,
    epoch: request.epoch,
  };
  try {
    return await answer(claim);
  } catch (error) {
    // The reason only: the worker's `ResourceClaimLostError` says "claim lost" itself.
    if (error instanceof ResourceClaimLostError)
      return { kind: "claim_lost", reason: error.message.replace(/^claim lost: /, "") };
    throw error;
  }
}
