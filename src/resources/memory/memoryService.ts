import { AwakenError, invalid, notFound } from "../../kernel/errors.js";
import { newId } from "../../kernel/ids.js";
import { applyMetadataPatch } from "../../kernel/metadata.js";
import type { Page } from "../../kernel/pagination.js";
import type { MemoryChange, MemoryChangeOutcome, MemorySnapshotEntry, ResourceClaim } from "../ports.js";
import type { ResourceDeps } from "../services.js";
import { type MemoryLimits, memoryLimitsFrom } from "./memoryLimits.js";
import { memoryPathProblem } from "./memoryPaths.js";
import type {
  MemoryAuthor,
  MemoryListItem,
  MemoryListQuery,
  MemoryRecord,
  MemoryStore,
  MemoryStoreListQuery,
  MemoryStoreRecord,
  MemoryVersionListQuery,
  MemoryVersionRecord,
  MemoryWriteResult,
} from "./ports.js";

/** Who asks: the workspace the request acts in and, when it is an API key, the author it records. */
export interface MemoryCaller {
  workspaceId: string;
  author: MemoryAuthor | null;
}

/**
 * Memory stores, their path-addressed memories and the memories' versions (SDK
 * `beta.memoryStores`), and the write-back a run makes at a commit point. Every memory change adds
 * one version in the same transaction; an archived store is read-only except for deletes and
 * redactions.
 */
export class MemoryService {
  readonly limits: MemoryLimits;
  private readonly store: MemoryStore;

  constructor(private readonly deps: ResourceDeps) {
    this.limits = memoryLimitsFrom(deps.env);
    this.store = deps.stores.memory;
  }

  async createStore(
    caller: MemoryCaller,
    cmd: { name: string; description: string; metadata: Record<string, string> },
  ): Promise<MemoryStoreRecord> {
    const now = this.deps.clock.now();
    const store: MemoryStoreRecord = {
      id: newId("memstore", now),
      workspaceId: caller.workspaceId,
      name: cmd.name,
      description: cmd.description,
      metadata: cmd.metadata,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    await this.store.createStore(store);
    return store;
  }

  async getStore(workspaceId: string, id: string): Promise<MemoryStoreRecord> {
    const store = await this.store.getStore(workspaceId, id);
    if (!store) throw notFound("memory store", id);
    return store;
  }

  async updateStore(
    caller: MemoryCaller,
    id: string,
    cmd: {
      name?: string | null | undefined;
      description?: string | null | undefined;
      metadata?: Record<string, string | null> | null | undefined;
    },
  ): Promise<MemoryStoreRecord> {
    const current = await this.getStore(caller.workspaceId, id);
    if (current.archivedAt !== null) throw archived(id);
    const next: MemoryStoreRecord = {
      ...current,
      // A store always has a name and a description (empty when unset): null means "leave it".
      name: cmd.name ?? current.name,
      description: cmd.description ?? current.description,
      metadata: applyMetadataPatch(current.metadata, cmd.metadata),
      updatedAt: this.deps.clock.now(),
    };
    if (!(await this.store.updateStore(next))) throw notFound("memory store", id);
    return next;
  }

  listStores(workspaceId: string, query: MemoryStoreListQuery): Promise<Page<MemoryStoreRecord>> {
    return this.store.listStores(workspaceId, query);
  }

  /** Archiving can't be undone; archiving an archived store answers it unchanged. */
  async archiveStore(caller: MemoryCaller, id: string): Promise<MemoryStoreRecord> {
    const current = await this.getStore(caller.workspaceId, id);
    if (current.archivedAt !== null) return current;
    const now = this.deps.clock.now();
    const next = { ...current, archivedAt: now, updatedAt: now };
    if (!(await this.store.updateStore(next))) throw notFound("memory store", id);
    return next;
  }

  async deleteStore(caller: MemoryCaller, id: string): Promise<void> {
    if (!(await this.store.deleteStore(caller.workspaceId, id))) throw notFound("memory store", id);
  }

  async createMemory(
    caller: MemoryCaller,
    storeId: string,
    cmd: { path: string; content: string },
  ): Promise<MemoryRecord> {
    this.checkPath(cmd.path);
    this.checkContent(cmd.content);
    const now = this.deps.clock.now();
    const result = await this.store.createMemory(
      caller.workspaceId,
      storeId,
      {
        id: newId("mem", now),
        versionId: newId("memver", now),
        path: cmd.path,
        content: cmd.content,
        author: caller.author,
      },
      this.limits,
      now,
    );
    return written(result, storeId, null);
  }

  async getMemory(workspaceId: string, storeId: string, memoryId: string): Promise<MemoryRecord> {
    await this.getStore(workspaceId, storeId);
    const memory = await this.store.getMemory(workspaceId, storeId, memoryId);
    if (!memory) throw notFound("memory", memoryId);
    return memory;
  }

  async updateMemory(
    caller: MemoryCaller,
    storeId: string,
    memoryId: string,
    cmd: { path: string | null; content: string | null; expectedContentSha256: string | null },
  ): Promise<MemoryRecord> {
    if (cmd.path !== null) this.checkPath(cmd.path);
    if (cmd.content !== null) this.checkContent(cmd.content);
    const now = this.deps.clock.now();
    const result = await this.store.updateMemory(
      caller.workspaceId,
      storeId,
      memoryId,
      { versionId: newId("memver", now), ...cmd, author: caller.author },
      now,
    );
    return written(result, storeId, memoryId);
  }

  async deleteMemory(
    caller: MemoryCaller,
    storeId: string,
    memoryId: string,
    expectedContentSha256: string | null,
  ): Promise<void> {
    const now = this.deps.clock.now();
    const result = await this.store.deleteMemory(
      caller.workspaceId,
      storeId,
      memoryId,
      { versionId: newId("memver", now), expectedContentSha256, author: caller.author },
      now,
    );
    written(result, storeId, memoryId);
  }

  async listMemories(
    workspaceId: string,
    storeId: string,
    query: MemoryListQuery,
  ): Promise<Page<MemoryListItem>> {
    const page = await this.store.listMemories(workspaceId, storeId, query);
    if (!page) throw notFound("memory store", storeId);
    return page;
  }

  async getVersion(workspaceId: string, storeId: string, versionId: string): Promise<MemoryVersionRecord> {
    await this.getStore(workspaceId, storeId);
    const version = await this.store.getVersion(workspaceId, storeId, versionId);
    if (!version) throw notFound("memory version", versionId);
    return version;
  }

  async listVersions(
    workspaceId: string,
    storeId: string,
    query: MemoryVersionListQuery,
  ): Promise<Page<MemoryVersionRecord>> {
    const page = await this.store.listVersions(workspaceId, storeId, query);
    if (!page) throw notFound("memory store", storeId);
    return page;
  }

  /** Blanks a version's path and content for good; who and when are kept. Allowed on an archived store. */
  async redactVersion(
    caller: MemoryCaller,
    storeId: string,
    versionId: string,
  ): Promise<MemoryVersionRecord> {
    await this.getStore(caller.workspaceId, storeId);
    const result = await this.store.redactVersion(
      caller.workspaceId,
      storeId,
      versionId,
      caller.author,
      this.deps.clock.now(),
    );
    if (result.ok) return result.version;
    if (result.reason === "not_found") throw notFound("memory version", versionId);
    throw new AwakenError(
      "memory_version_current",
      `memory version ${versionId} holds its memory's current content; update or delete the memory, then redact this version`,
    );
  }

  /** A store's memories as a run reads them; paths are store-relative (no leading slash). */
  async snapshot(workspaceId: string, storeId: string): Promise<MemorySnapshotEntry[]> {
    const entries = await this.store.snapshot(workspaceId, storeId);
    if (!entries) throw notFound("memory store", storeId);
    return entries;
  }

  /**
   * A run's changes, under its claim: throws `ResourceClaimLostError` having written nothing when
   * the claim is not live; otherwise one outcome per change, in order (see `MemoryStore`).
   */
  writeBack(claim: ResourceClaim, storeId: string, changes: MemoryChange[]): Promise<MemoryChangeOutcome[]> {
    return this.store.writeBackUnderClaim(claim, storeId, changes, this.limits, this.deps.clock.now());
  }

  private checkPath(path: string): void {
    const problem = memoryPathProblem(path);
    if (problem) throw invalid(`path ${problem}`);
  }

  private checkContent(content: string): void {
    const size = Buffer.byteLength(content, "utf8");
    if (size > this.limits.maxContentBytes) {
      throw invalid(`content is ${size} bytes as UTF-8; at most ${this.limits.maxContentBytes} are accepted`);
    }
  }
}

function archived(storeId: string): AwakenError {
  return new AwakenError(
    "memory_store_archived",
    `memory store ${storeId} is archived: its memories can be read, deleted and their versions redacted, not created or changed`,
  );
}

/** The memory a write produced, or the wire's error for why it was refused (nothing was written). */
function written(result: MemoryWriteResult, storeId: string, memoryId: string | null): MemoryRecord {
  if (result.ok) return result.memory;
  const refusal = result.refusal;
  switch (refusal.kind) {
    case "store_not_found":
      throw notFound("memory store", storeId);
    case "memory_not_found":
      throw notFound("memory", memoryId ?? "");
    case "store_archived":
      throw archived(storeId);
    case "precondition_failed":
      throw new AwakenError(
        "memory_precondition_failed",
        `memory ${memoryId} changed: its content_sha256 is no longer the expected one; nothing was written. Retrieve it and retry.`,
      );
    case "path_conflict":
      throw new AwakenError(
        "memory_path_conflict",
        `the path is already used by memory ${refusal.conflictingMemoryId} at ${refusal.conflictingPath}, or overlaps it (one path is an ancestor of the other)`,
        {
          details: {
            conflicting_path: refusal.conflictingPath,
            conflicting_memory_id: refusal.conflictingMemoryId,
          },
        },
      );
    case "store_full":
      throw new AwakenError(
        "memory_store_full",
        `memory store ${storeId} holds its limit of ${refusal.limit} memories; delete some first (AWAKEN_MEMORY_MAX_PER_STORE)`,
      );
  }
}
