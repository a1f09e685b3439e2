/**
 * The Resources context's contracts with the rest of the product. Files, Skills, Memory stores and
 * Repositories keep their own typed ports and lifecycles (each family's folder); this file holds
 * only what crosses the context's edge:
 *
 * - `BlobStore`: where every family keeps bytes, content-addressed (one conformance suite, several
 *   backends);
 * - `RunResources`: the clients a run gets, narrowed by type and scoped to its claim. The runtime and
 *   the worker see nothing else of this context: never a store, never another session's resource.
 */

import { PlatformError } from "../kernel/errors.js";
import type { ScopedSealer } from "../secrets/ports.js";

/** A blob's address: `sha256:<64 lowercase hex>` of its bytes. */
export type BlobDigest = string;

export interface BlobStore {
  /**
   * Stores `bytes` under their digest and returns it. Idempotent: the same bytes stored twice are
   * one blob. Durable once the promise resolves.
   */
  put(bytes: Uint8Array): Promise<{ digest: BlobDigest; size: number }>;
  /** The bytes, or null when no blob has that digest. */
  get(digest: BlobDigest): Promise<Buffer | null>;
  has(digest: BlobDigest): Promise<boolean>;
  /** Removes the blob; a missing one is not an error. Callers delete only blobs nothing references. */
  delete(digest: BlobDigest): Promise<void>;
}

/**
 * A family that keeps blobs answers whether any of its rows still names one. Blobs are shared by
 * content across families, so one is deleted only when every family answers no.
 */
export interface BlobReferences {
  references(digest: BlobDigest): Promise<boolean>;
}

/**
 * The claim a run names on every call it makes for resources: each answer is given only while this
 * owner holds this run at this epoch with an unexpired lease, for a session of this workspace.
 */
export interface ResourceClaim {
  workspaceId: string;
  sessionId: string;
  runId: string;
  owner: string;
  epoch: number;
}

/** Refused because the claim named is not live (expired, reclaimed, cancelled) or not this session's. */
export class ResourceClaimLostError extends PlatformError {
  constructor(reason: string) {
    super("claim_lost", `claim lost: ${reason}`);
    this.name = "ResourceClaimLostError";
  }
}

/** A session resource as a run realizes it: secret-free (a repository's token is opened apart). */
export type RunResource =
  | {
      type: "file";
      id: string;
      fileId: string;
      /** Absolute path inside the sandbox. */
      mountPath: string;
      filename: string;
      mimeType: string;
      sizeBytes: number;
      digest: BlobDigest;
    }
  | {
      type: "memory_store";
      /** The store's id (a memory store resource has no id of its own on the wire). */
      memoryStoreId: string;
      mountPath: string;
      access: "read_write" | "read_only";
      name: string;
      description: string;
      instructions: string | null;
    }
  | {
      type: "github_repository";
      id: string;
      url: string;
      mountPath: string;
      checkout: { type: "branch"; name: string } | { type: "commit"; sha: string } | null;
      /** Whether a token is sealed for it (opened only for the clone, `RunResources.repositoryToken`). */
      hasToken: boolean;
    };

/** A skill the agent's publication pins, at its exact version (never "latest" at run time). */
export interface RunSkill {
  skillId: string;
  version: string;
  name: string;
  description: string;
  /** The version's files, relative to the skill's root (`SKILL.md` among them). */
  files: Array<{ path: string; digest: BlobDigest; sizeBytes: number }>;
}

/** One memory of a store as the run read it. */
export interface MemorySnapshotEntry {
  memoryId: string;
  /** Store-relative path, `/`-separated, no leading slash. */
  path: string;
  content: string;
  /** sha256 hex of `content` (the SDK's `content_sha256`): the precondition of a write-back. */
  contentSha256: string;
}

/** A change the run made to a read-write store, written back at a commit point. */
export type MemoryChange =
  | { kind: "create"; path: string; content: string }
  | { kind: "update"; memoryId: string; path: string; content: string; expectedContentSha256: string }
  | { kind: "delete"; memoryId: string; path: string; expectedContentSha256: string };

export type MemoryChangeOutcome =
  | { path: string; outcome: "written"; memoryId: string; versionId: string; contentSha256: string }
  | { path: string; outcome: "deleted"; memoryId: string; versionId: string }
  /** The memory changed since the snapshot (the precondition failed): nothing of it was written. */
  | { path: string; outcome: "conflict"; reason: string }
  /** Refused for what it is (too large, a bad path, a read-only store). */
  | { path: string; outcome: "refused"; reason: string };

/**
 * What a run may ask of the Resources context. In process it is answered next to the stores; on a
 * remote worker, over the worker transport by the coordinator. Every call checks the claim first and
 * throws `ResourceClaimLostError` having read and written nothing when it is not live.
 */
export interface RunResources {
  /** The session's resources as of now, and the agent's pinned skills: what this run will see. */
  resolve(claim: ResourceClaim): Promise<{ resources: RunResource[]; skills: RunSkill[] }>;
  /** A blob the run's resources reference (a mounted file, a pinned skill's file); null: none such. */
  readBlob(claim: ResourceClaim, digest: BlobDigest): Promise<Buffer | null>;
  /** Every memory of a store the session mounts, with its content hash. */
  memorySnapshot(claim: ResourceClaim, memoryStoreId: string): Promise<MemorySnapshotEntry[]>;
  /**
   * Writes changes back as new memory versions, in one transaction with the claim check: a run that
   * lost its claim writes nothing; each change's precondition is checked and a failed one is a
   * `conflict` outcome, never an overwrite.
   */
  writeMemory(
    claim: ResourceClaim,
    memoryStoreId: string,
    changes: MemoryChange[],
  ): Promise<MemoryChangeOutcome[]>;
  /** A repository resource's token for one clone (the caller zeroes it); null: it has none. */
  repositoryToken(claim: ResourceClaim, resourceId: string): Promise<Buffer | null>;
}

/**
 * Seals a repository resource's token at rest and opens it for one clone, under the master key like
 * vault credentials (Control's sealer, in process or over the private link). Identities it is given
 * start with `repo:`; the sealer refuses any other.
 */
export type TokenSealer = ScopedSealer;

/**
 * A session resource as stored: the one truth the session's `resources`, the session resource
 * routes and every run's realization read. Secret-free: a repository's token is kept sealed
 * (`sealedToken`, opened only for a clone) and never leaves this context in plaintext.
 */
export type SessionResourceRecord = {
  /** `sesrsc_…` (a memory store resource shows its store's id on the wire instead). */
  id: string;
  workspaceId: string;
  sessionId: string;
  mountPath: string;
  createdAt: number;
  updatedAt: number;
} & (
  | { type: "file"; fileId: string }
  | {
      type: "memory_store";
      memoryStoreId: string;
      access: "read_write" | "read_only";
      /** The store's name and description, snapshotted when it was attached. */
      name: string;
      description: string;
      instructions: string | null;
    }
  | {
      type: "github_repository";
      url: string;
      checkout: { type: "branch"; name: string } | { type: "commit"; sha: string } | null;
      /** The token sealed under the master key (identity `repo:<id>` at `tokenRevision`); null: none. */
      sealedToken: string | null;
      /** Bumped on every rotation: a sealed token copied from an older revision does not open. */
      tokenRevision: number;
    }
);

/**
 * Validates the resources a new session asks for (each a 400/404 naming the problem) and seals
 * their tokens, storing nothing: the session store writes the answer in the session's transaction.
 */
export interface SessionResourcePreparer {
  prepare(
    workspaceId: string,
    sessionId: string,
    requested: readonly SessionResourceRequest[],
    now: number,
  ): Promise<SessionResourceRecord[]>;
}

/** A resource a session asks for (at creation, or `add`): validated and filled in by the preparer. */
export type SessionResourceRequest =
  | { type: "file"; fileId: string; mountPath: string | null }
  | {
      type: "github_repository";
      url: string;
      /** Plaintext only on its way to the sealer; never stored, logged or answered. */
      authorizationToken: string | null;
      checkout: { type: "branch"; name: string } | { type: "commit"; sha: string } | null;
      mountPath: string | null;
    }
  | {
      type: "memory_store";
      memoryStoreId: string;
      access: "read_write" | "read_only" | null;
      instructions: string | null;
    };
