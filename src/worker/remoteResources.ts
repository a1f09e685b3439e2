import { AwakenError } from "../kernel/errors.js";
import {
  type BlobDigest,
  type MemoryChange,
  type MemoryChangeOutcome,
  type MemorySnapshotEntry,
  type ResourceClaim,
  ResourceClaimLostError,
  type RunResource,
  type RunResources,
  type RunSkill,
} from "../resources/ports.js";
import { CoordinatorRejected, type ResourceRouteName } from "./httpTransport.js";
import type { WorkerRequest, WorkerResponse } from "./transportWire.js";

/** What this port needs of the transport (`HttpWorkerTransport.resourceCall`). */
export interface ResourceTransport {
  resourceCall<R extends ResourceRouteName>(name: R, request: WorkerRequest<R>): Promise<WorkerResponse<R>>;
}

/**
 * The runtime's `RunResources` on a remote worker: every call crosses the worker transport naming
 * the run's claim, and the coordinator answers through the in-process clients after checking the
 * claim live (edge/worker-transport/resourceRoutes.ts). The worker holds no store and no database
 * handle: it sees its claimed session's resources and nothing else.
 *
 * A `claim_lost` answer is thrown as `ResourceClaimLostError`, after the transport already aborted
 * the run's signal (its cancel listeners), so the runtime ends the slice as lost and writes nothing.
 * Bytes arrive as base64 and are handed on as Buffers; a repository token's Buffer is zeroed by its
 * caller after the clone (the base64 string itself cannot be zeroed; nothing here logs it).
 */
export class RemoteResources implements RunResources {
  private readonly transport: ResourceTransport;

  constructor(transport: ResourceTransport) {
    this.transport = {
      resourceCall: (name, request) => refusalsTyped(transport.resourceCall(name, request)),
    };
  }

  async resolve(claim: ResourceClaim): Promise<{ resources: RunResource[]; skills: RunSkill[] }> {
    const answer = await this.transport.resourceCall("resolveResources", claimOf(claim));
    if (answer.kind === "claim_lost") throw new ResourceClaimLostError(answer.reason);
    return { resources: answer.resources, skills: answer.skills };
  }

  async readBlob(claim: ResourceClaim, digest: BlobDigest): Promise<Buffer | null> {
    const answer = await this.transport.resourceCall("readBlob", { ...claimOf(claim), digest });
    switch (answer.kind) {
      case "blob":
        return Buffer.from(answer.data, "base64");
      case "none":
        return null;
      case "claim_lost":
        throw new ResourceClaimLostError(answer.reason);
    }
  }

  async memorySnapshot(claim: ResourceClaim, memoryStoreId: string): Promise<MemorySnapshotEntry[]> {
    const answer = await this.transport.resourceCall("memorySnapshot", { ...claimOf(claim), memoryStoreId });
    if (answer.kind === "claim_lost") throw new ResourceClaimLostError(answer.reason);
    return answer.entries;
  }

  async writeMemory(
    claim: ResourceClaim,
    memoryStoreId: string,
    changes: MemoryChange[],
  ): Promise<MemoryChangeOutcome[]> {
    const answer = await this.transport.resourceCall("writeMemory", {
      ...claimOf(claim),
      memoryStoreId,
      changes,
    });
    if (answer.kind === "claim_lost") throw new ResourceClaimLostError(answer.reason);
    return answer.outcomes;
  }

  async repositoryToken(claim: ResourceClaim, resourceId: string): Promise<Buffer | null> {
    const answer = await this.transport.resourceCall("repositoryToken", { ...claimOf(claim), resourceId });
    switch (answer.kind) {
      case "token":
        return Buffer.from(answer.token, "base64");
      case "none":
        return null;
      case "claim_lost":
        throw new ResourceClaimLostError(answer.reason);
    }
  }
}

/** The claim's own fields only: the wire's objects are strict, and nothing else may ride along. */
function claimOf(claim: ResourceClaim): ResourceClaim {
  return {
    workspaceId: claim.workspaceId,
    sessionId: claim.sessionId,
    runId: claim.runId,
    owner: claim.owner,
    epoch: claim.epoch,
  };
}

/**
 * The coordinator's refusals of what the session's resources are (a 404: a file or skill version
 * deleted since, a store not mounted; a 400 or 413) arrive typed as they were raised in process,
 * so the runtime ends the run saying why; anything else stays an error of this attempt.
 */
async function refusalsTyped<T>(answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    if (!(error instanceof CoordinatorRejected)) throw error;
    const code =
      error.status === 404
        ? "not_found"
        : error.status === 400
          ? "invalid_request"
          : error.status === 413
            ? "payload_too_large"
            : null;
    if (code === null) throw error;
    throw new AwakenError(code, error.message, { cause: error });
  }
}
