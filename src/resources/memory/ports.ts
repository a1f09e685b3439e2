/**
 * The Memory family's store port (its SQL implementation lives in stores/sql). A memory store holds
 * path-addressed text memories; every change to a memory adds an immutable memory version (only
 * redaction alters one later). Writes that change memories happen in one transaction with their
 * version and take the store's lock, so concurrent writers of one store are ordered.
 */
import type { Page } from "../../kernel/pagination.js";
import type { MemoryChange, MemoryChangeOutcome, MemorySnapshotEntry, ResourceClaim } from "../ports.js";

export interface MemoryStoreRecord {
  id: string;
  workspaceId: string;
  name: string;
  description: string;
  metadata: Record<string, string>;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
}

/** A memory as stored; `content` is always loaded (at most the content limit). */
export interface MemoryRecord {
  id: string;
  memoryStoreId: string;
  path: string;
  content: string;
  contentSha256: string;
  contentSizeBytes: number;
  memoryVersionId: string;
  createdAt: number;
  updatedAt: number;
}

/** Who made a change: an API key, or an agent in a session writing back through its mount. */
export type MemoryAuthor =
  | { type: "api_actor"; apiKeyId: string }
  | { type: "session_actor"; sessionId: string; runId: string };

export type MemoryVersionOperation = "created" | "modified" | "deleted";

export interface MemoryVersionRecord {
  id: string;
  memoryStoreId: string;
  memoryId: string;
  operation: MemoryVersionOperation;
  /** Null once redacted. */
  path: string | null;
  /** Null for a deletion and once redacted. */
  content: string | null;
  contentSha256: string | null;
  contentSizeBytes: number | null;
  createdAt: number;
  /** Null when the author was not recorded (a caller other than an API key). */
  createdBy: MemoryAuthor | null;
  redactedAt: number | null;
  redactedBy: MemoryAuthor | null;
}

export interface MemoryStoreListQuery {
  limit: number;
  cursor: string | null;
  includeArchived: boolean;
  createdAtGte: number | null;
  createdAtLte: number | null;
}

/** A memory's path as a list shows it: the memory, or a directory marker for deeper ones. */
export type MemoryListItem = { kind: "memory"; memory: MemoryRecord } | { kind: "prefix"; path: string };

export interface MemoryListQuery {
  limit: number;
  cursor: string | null;
  /** `/` or a path ending with `/`. */
  pathPrefix: string;
  /** 0: every memory below the prefix; n: n segments below it, deeper ones as prefixes. */
  depth: number;
}

export interface MemoryVersionListQuery {
  limit: number;
  cursor: string | null;
  memoryId: string | null;
  operation: MemoryVersionOperation | null;
  sessionId: string | null;
  apiKeyId: string | null;
  /** Set when the caller filters by a service account: none is ever recorded, so nothing matches. */
  serviceAccountId: string | null;
  createdAtGte: number | null;
  createdAtLte: number | null;
}

/** What a single memory write needs checked before it applies, beyond the store being writable. */
export interface MemoryWriteLimits {
  maxContentBytes: number;
  maxMemoriesPerStore: number;
}

/** A write refused for the memory's state, in the wire's terms (each a 409, nothing written). */
export type MemoryWriteRefusal =
  | { kind: "store_not_found" }
  | { kind: "store_archived" }
  | { kind: "memory_not_found" }
  | { kind: "precondition_failed" }
  | { kind: "path_conflict"; conflictingPath: string; conflictingMemoryId: string }
  | { kind: "store_full"; limit: number };

export type MemoryWriteResult =
  | { ok: true; memory: MemoryRecord }
  | { ok: false; refusal: MemoryWriteRefusal };

export interface MemoryStore {
  readonly family: "memory";

  createStore(store: MemoryStoreRecord): Promise<void>;
  getStore(workspaceId: string, id: string): Promise<MemoryStoreRecord | null>;
  /** Replaces name, description, metadata, updated and archived times; false: no such store. */
  updateStore(store: MemoryStoreRecord): Promise<boolean>;
  listStores(workspaceId: string, query: MemoryStoreListQuery): Promise<Page<MemoryStoreRecord>>;
  /** Deletes the store with its memories and versions; false: no such store. */
  deleteStore(workspaceId: string, id: string): Promise<boolean>;

  createMemory(
    workspaceId: string,
    memoryStoreId: string,
    input: { id: string; versionId: string; path: string; content: string; author: MemoryAuthor | null },
    limits: MemoryWriteLimits,
    now: number,
  ): Promise<MemoryWriteResult>;
  getMemory(workspaceId: string, memoryStoreId: string, memoryId: string): Promise<MemoryRecord | null>;
  /**
   * Changes content and/or path. With `expectedContentSha256`, applies only if the memory's content
   * still has that hash, unless it already has exactly the requested content and path. A change
   * that changes nothing adds no version.
   */
  updateMemory(
    workspaceId: string,
    memoryStoreId: string,
    memoryId: string,
    input: {
      versionId: string;
      path: string | null;
      content: string | null;
      expectedContentSha256: string | null;
      author: MemoryAuthor | null;
    },
    now: number,
  ): Promise<MemoryWriteResult>;
  /** Deletes the memory (allowed on an archived store) and records a `deleted` version. */
  deleteMemory(
    workspaceId: string,
    memoryStoreId: string,
    memoryId: string,
    input: { versionId: string; expectedContentSha256: string | null; author: MemoryAuthor | null },
    now: number,
  ): Promise<MemoryWriteResult>;
  listMemories(
    workspaceId: string,
    memoryStoreId: string,
    query: MemoryListQuery,
  ): Promise<Page<MemoryListItem> | null>;

  getVersion(
    workspaceId: string,
    memoryStoreId: string,
    versionId: string,
  ): Promise<MemoryVersionRecord | null>;
  listVersions(
    workspaceId: string,
    memoryStoreId: string,
    query: MemoryVersionListQuery,
  ): Promise<Page<MemoryVersionRecord> | null>;
  /**
   * Blanks a version's path and content for good. Refused (`current`) for the version that holds a
   * live memory's current content: change or delete the memory first.
   */
  redactVersion(
    workspaceId: string,
    memoryStoreId: string,
    versionId: string,
    by: MemoryAuthor | null,
    now: number,
  ): Promise<{ ok: true; version: MemoryVersionRecord } | { ok: false; reason: "not_found" | "current" }>;

  /** Every memory of the store, with its content hash; null: no such store in the workspace. */
  snapshot(workspaceId: string, memoryStoreId: string): Promise<MemorySnapshotEntry[] | null>;
  /**
   * A run's changes, in one transaction with the check that `claim` is live (throws
   * `ResourceClaimLostError` having written nothing otherwise). Each change applies only if its
   * precondition holds; one that fails is a `conflict` and the others still apply, in order.
   */
  writeBackUnderClaim(
    claim: ResourceClaim,
    memoryStoreId: string,
    changes: MemoryChange[],
    limits: MemoryWriteLimits,
    now: number,
  ): Promise<MemoryChangeOutcome[]>;
}
