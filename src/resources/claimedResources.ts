/**
 * The in-process `RunResources`: what a run (of this process's workers, or a remote worker's
 * through the worker transport) may ask of the Resources context. Every call first checks the
 * claim (this owner holds this run at this epoch with a live lease, and the run is one of the
 * session named, in the workspace named), then answers from the family services, and only about
 * the resources of that session: a blob is read only if one of them references it, a memory store
 * only if the session mounts it (and written only if it mounts it read-write). The memory store
 * checks the claim again in the write-back's own transaction, so a claim lost in between writes
 * nothing.
 */
import { AwakenError } from "../kernel/errors.js";
import type {
  BlobDigest,
  BlobStore,
  MemoryChange,
  MemoryChangeOutcome,
  MemorySnapshotEntry,
} from "./ports.js";
import {
  type ResourceClaim,
  ResourceClaimLostError,
  type RunResource,
  type RunResources,
  type RunSkill,
  type SessionResourceRecord,
} from "./ports.js";
import type { ResourceServices } from "./services.js";

/** A skill the session's agent pins, as its definition stores it. */
export interface PinnedSkill {
  type: "anthropic" | "custom";
  skill_id: string;
  version: string;
}

/** A run held under a claim, as `ClaimedResourceDeps.heldRun` reads it. */
export interface HeldRun {
  sessionId: string;
  workspaceId: string;
  /** The skills the session's pinned agent version lists. */
  skills: readonly PinnedSkill[];
  /** The session's resources, read with the run (the claim check and the listing are one read). */
  resources: readonly SessionResourceRecord[];
}

export interface ClaimedResourceDeps {
  services: Pick<ResourceServices, "sessionResources" | "skills" | "memory">;
  blobs: BlobStore;
  /**
   * The run's session, workspace, pinned skills and resources while `owner` holds it at `epoch`
   * with an unexpired lease (one read); null otherwise, or when the session is deleted.
   */
  heldRun(runId: string, owner: string, epoch: number): Promise<HeldRun | null>;
}

export class ClaimedResources implements RunResources {
  constructor(private readonly deps: ClaimedResourceDeps) {}

  async resolve(claim: ResourceClaim): Promise<{ resources: RunResource[]; skills: RunSkill[] }> {
    return this.view(claim, await this.check(claim));
  }

  async readBlob(claim: ResourceClaim, digest: BlobDigest): Promise<Buffer | null> {
    const { resources, skills } = await this.view(claim, await this.check(claim));
    const referenced =
      resources.some((r) => r.type === "file" && r.digest === digest) ||
      skills.some((s) => s.files.some((f) => f.digest === digest));
    // Another session's blob (or any other) is answered like a missing one: its existence is not said.
    if (!referenced) return null;
    return this.deps.blobs.get(digest);
  }

  async memorySnapshot(claim: ResourceClaim, memoryStoreId: string): Promise<MemorySnapshotEntry[]> {
    const store = mountedStore(await this.check(claim), memoryStoreId);
    if (!store) throw notMounted(memoryStoreId);
    return this.deps.services.memory.snapshot(claim.workspaceId, memoryStoreId);
  }

  async writeMemory(
    claim: ResourceClaim,
    memoryStoreId: string,
    changes: MemoryChange[],
  ): Promise<MemoryChangeOutcome[]> {
    const store = mountedStore(await this.check(claim), memoryStoreId);
    if (!store) throw notMounted(memoryStoreId);
    if (store.access !== "read_write")
      return changes.map((c) => ({
        path: c.path,
        outcome: "refused",
        reason: "the memory store is mounted read-only",
      }));
    return this.deps.services.memory.writeBack(claim, memoryStoreId, changes);
  }

  async repositoryToken(claim: ResourceClaim, resourceId: string): Promise<Buffer | null> {
    await this.check(claim);
    return this.deps.services.sessionResources.openRepositoryToken(
      claim.workspaceId,
      claim.sessionId,
      resourceId,
    );
  }

  /** Throws `ResourceClaimLostError`, having read nothing, unless the claim is live and the session's. */
  private async check(claim: ResourceClaim): Promise<HeldRun> {
    const { runId, owner, epoch } = claim;
    const run = await this.deps.heldRun(runId, owner, epoch);
    if (!run)
      throw new ResourceClaimLostError(
        `run ${runId} is not claimed by ${owner} at epoch ${epoch} with a live lease`,
      );
    if (run.sessionId !== claim.sessionId || run.workspaceId !== claim.workspaceId)
      throw new ResourceClaimLostError(`run ${runId} is not a run of session ${claim.sessionId}`);
    return run;
  }

  private async view(
    claim: ResourceClaim,
    held: HeldRun,
  ): Promise<{ resources: RunResource[]; skills: RunSkill[] }> {
    const resources = await this.deps.services.sessionResources.forRun(claim.workspaceId, held.resources);
    const skills: RunSkill[] = [];
    for (const pinned of held.skills) {
      // Anthropic's own skills are not stored on this server; admission says so for new agents.
      if (pinned.type !== "custom") continue;
      const skill = await this.deps.services.skills.versionForRun(
        claim.workspaceId,
        pinned.skill_id,
        pinned.version,
      );
      // A pinned version deleted since publication: the run fails saying which, never "latest".
      if (!skill)
        throw new AwakenError(
          "not_found",
          `the agent's skill ${pinned.skill_id} version ${pinned.version} no longer exists; publish the agent again to pin another version`,
        );
      skills.push(skill);
    }
    return { resources, skills };
  }
}

/** The session's mount of a memory store, if it mounts it. */
function mountedStore(held: HeldRun, memoryStoreId: string) {
  const store = held.resources.find((r) => r.type === "memory_store" && r.memoryStoreId === memoryStoreId);
  return store?.type === "memory_store" ? store : null;
}

/** A store the session does not mount is answered as absent: its existence is not said. */
function notMounted(memoryStoreId: string): AwakenError {
  return new AwakenError("not_found", `the session does not mount the memory store ${memoryStoreId}`);
}
