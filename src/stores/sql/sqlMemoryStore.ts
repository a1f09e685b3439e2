import type { Page } from "../../kernel/pagination.js";
import { listedAs } from "../../resources/memory/memoryPaths.js";
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
  MemoryWriteLimits,
  MemoryWriteResult,
} from "../../resources/memory/ports.js";
import type {
  MemoryChange,
  MemoryChangeOutcome,
  MemorySnapshotEntry,
  ResourceClaim,
} from "../../resources/ports.js";
import { begin, type Db, decodeCursor, encodeCursor, type SqlDialect, type Tx } from "./db.js";
import { redactionColumns, storeRow, toMemory, toStore, toVersion } from "./memoryRows.js";
import { writeBackUnderClaim } from "./memoryWriteBack.js";
import { applyCreate, applyDelete, applyUpdate, lockStore } from "./memoryWrites.js";

export class SqlMemoryStore implements MemoryStore {
  readonly family = "memory" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}

  async createStore(store: MemoryStoreRecord): Promise<void> {
    await this.db.insertInto("memory_stores").values(storeRow(store)).execute();
  }

  async getStore(workspaceId: string, id: string): Promise<MemoryStoreRecord | null> {
    const row = await this.db
      .selectFrom("memory_stores")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toStore(row) : null;
  }

  async updateStore(store: MemoryStoreRecord): Promise<boolean> {
    const { id, workspace_id, created_at, ...changes } = storeRow(store);
    const result = await this.db
      .updateTable("memory_stores")
      .set(changes)
      .where("workspace_id", "=", workspace_id)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listStores(workspaceId: string, q: MemoryStoreListQuery): Promise<Page<MemoryStoreRecord>> {
    const cursor = decodeCursor("memory_stores", q.cursor);
    let query = this.db.selectFrom("memory_stores").selectAll().where("workspace_id", "=", workspaceId);
    if (!q.includeArchived) query = query.where("archived_at", "is", null);
    if (q.createdAtGte !== null) query = query.where("created_at", ">=", q.createdAtGte);
    if (q.createdAtLte !== null) query = query.where("created_at", "<=", q.createdAtLte);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    return pageOf(rows.map(toStore), q.limit, "memory_stores");
  }

  async deleteStore(workspaceId: string, id: string): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const store = await lockStore(tx, this.dialect, workspaceId, id);
      if (!store) return false;
      // The SDK: the store's memories and versions are no longer retrievable; nothing is kept.
      await tx.deleteFrom("memory_versions").where("memory_store_id", "=", id).execute();
      await tx.deleteFrom("memories").where("memory_store_id", "=", id).execute();
      await tx.deleteFrom("memory_stores").where("id", "=", id).execute();
      return true;
    });
  }

  createMemory(
    workspaceId: string,
    memoryStoreId: string,
    input: { id: string; versionId: string; path: string; content: string; author: MemoryAuthor | null },
    limits: MemoryWriteLimits,
    now: number,
  ): Promise<MemoryWriteResult> {
    return this.underStoreLock(workspaceId, memoryStoreId, (tx, store) =>
      applyCreate(tx, store, input, limits, now),
    );
  }

  async getMemory(
    workspaceId: string,
    memoryStoreId: string,
    memoryId: string,
  ): Promise<MemoryRecord | null> {
    const row = await this.db
      .selectFrom("memories")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("memory_store_id", "=", memoryStoreId)
      .where("id", "=", memoryId)
      .executeTakeFirst();
    return row ? toMemory(row) : null;
  }

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
  ): Promise<MemoryWriteResult> {
    return this.underStoreLock(workspaceId, memoryStoreId, (tx, store) =>
      applyUpdate(tx, store, memoryId, input, now),
    );
  }

  deleteMemory(
    workspaceId: string,
    memoryStoreId: string,
    memoryId: string,
    input: { versionId: string; expectedContentSha256: string | null; author: MemoryAuthor | null },
    now: number,
  ): Promise<MemoryWriteResult> {
    return this.underStoreLock(workspaceId, memoryStoreId, (tx, store) =>
      applyDelete(tx, store, memoryId, input, now),
    );
  }

  /**
   * Lists by path. The directory roll-up (`depth`) is computed over the prefix's paths in memory:
   * a store holds at most the per-store memory limit, and only ids and paths are read for it.
   */
  async listMemories(
    workspaceId: string,
    memoryStoreId: string,
    q: MemoryListQuery,
  ): Promise<Page<MemoryListItem> | null> {
    if (!(await this.getStore(workspaceId, memoryStoreId))) return null;
    const cursor = decodeCursor("memories", q.cursor);
    const after = cursor && typeof cursor.path === "string" ? cursor.path : null;
    let query = this.db
      .selectFrom("memories")
      .select(["id", "path"])
      .where("memory_store_id", "=", memoryStoreId);
    if (q.pathPrefix !== "/") {
      query = query.where(
        (eb) => eb.fn("substr", [eb.ref("path"), eb.val(1), eb.val(Array.from(q.pathPrefix).length)]),
        "=",
        q.pathPrefix,
      );
    }
    const rows = await query.execute();
    const listed = new Map<string, { prefix: boolean; id: string }>();
    for (const row of rows) {
      const item = listedAs(row.path, q.pathPrefix, q.depth);
      if (!listed.has(item.path)) listed.set(item.path, { prefix: item.prefix, id: row.id });
    }
    const paths = [...listed.keys()].filter((p) => after === null || p > after).sort(compareCodeUnits);
    const pagePaths = paths.slice(0, q.limit);
    const memoryIds = pagePaths.flatMap((p) => (listed.get(p)?.prefix ? [] : [listed.get(p)?.id ?? ""]));
    const memories =
      memoryIds.length === 0
        ? []
        : await this.db.selectFrom("memories").selectAll().where("id", "in", memoryIds).execute();
    const byId = new Map(memories.map((m) => [m.id, toMemory(m)]));
    const data: MemoryListItem[] = [];
    for (const path of pagePaths) {
      const entry = listed.get(path);
      const memory = entry && !entry.prefix ? byId.get(entry.id) : undefined;
      if (entry?.prefix) data.push({ kind: "prefix", path });
      else if (memory) data.push({ kind: "memory", memory });
    }
    const last = pagePaths[pagePaths.length - 1];
    return {
      data,
      nextCursor: paths.length > q.limit && last ? encodeCursor("memories", { path: last }) : null,
    };
  }

  async getVersion(
    workspaceId: string,
    memoryStoreId: string,
    versionId: string,
  ): Promise<MemoryVersionRecord | null> {
    const row = await this.db
      .selectFrom("memory_versions")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("memory_store_id", "=", memoryStoreId)
      .where("id", "=", versionId)
      .executeTakeFirst();
    return row ? toVersion(row) : null;
  }

  async listVersions(
    workspaceId: string,
    memoryStoreId: string,
    q: MemoryVersionListQuery,
  ): Promise<Page<MemoryVersionRecord> | null> {
    if (!(await this.getStore(workspaceId, memoryStoreId))) return null;
    if (q.serviceAccountId !== null) return { data: [], nextCursor: null };
    const cursor = decodeCursor("memory_versions", q.cursor);
    let query = this.db
      .selectFrom("memory_versions")
      .selectAll()
      .where("memory_store_id", "=", memoryStoreId);
    if (q.memoryId !== null) query = query.where("memory_id", "=", q.memoryId);
    if (q.operation !== null) query = query.where("operation", "=", q.operation);
    if (q.sessionId !== null) {
      query = query.where("created_by_type", "=", "session_actor").where("created_by_id", "=", q.sessionId);
    }
    if (q.apiKeyId !== null) {
      query = query.where("created_by_type", "=", "api_actor").where("created_by_id", "=", q.apiKeyId);
    }
    if (q.createdAtGte !== null) query = query.where("created_at", ">=", q.createdAtGte);
    if (q.createdAtLte !== null) query = query.where("created_at", "<=", q.createdAtLte);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    return pageOf(rows.map(toVersion), q.limit, "memory_versions");
  }

  async redactVersion(
    workspaceId: string,
    memoryStoreId: string,
    versionId: string,
    by: MemoryAuthor | null,
    now: number,
  ): Promise<{ ok: true; version: MemoryVersionRecord } | { ok: false; reason: "not_found" | "current" }> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const store = await lockStore(tx, this.dialect, workspaceId, memoryStoreId);
      if (!store) return { ok: false, reason: "not_found" } as const;
      const row = await tx
        .selectFrom("memory_versions")
        .selectAll()
        .where("memory_store_id", "=", memoryStoreId)
        .where("id", "=", versionId)
        .executeTakeFirst();
      if (!row) return { ok: false, reason: "not_found" } as const;
      if (row.redacted_at !== null) return { ok: true, version: toVersion(row) } as const;
      const holder = await tx
        .selectFrom("memories")
        .select(["id"])
        .where("memory_version_id", "=", versionId)
        .executeTakeFirst();
      if (holder) return { ok: false, reason: "current" } as const;
      const redacted = { ...row, ...redactionColumns(by, now) };
      await tx
        .updateTable("memory_versions")
        .set(redactionColumns(by, now))
        .where("id", "=", versionId)
        .execute();
      return { ok: true, version: toVersion(redacted) } as const;
    });
  }

  async snapshot(workspaceId: string, memoryStoreId: string): Promise<MemorySnapshotEntry[] | null> {
    if (!(await this.getStore(workspaceId, memoryStoreId))) return null;
    const rows = await this.db
      .selectFrom("memories")
      .select(["id", "path", "content", "content_sha256"])
      .where("memory_store_id", "=", memoryStoreId)
      .orderBy("id")
      .execute();
    // The run's view is store-relative (no leading slash), ready to join under its mount path.
    return rows.map((r) => ({
      memoryId: r.id,
      path: r.path.slice(1),
      content: r.content,
      contentSha256: r.content_sha256,
    }));
  }

  writeBackUnderClaim(
    claim: ResourceClaim,
    memoryStoreId: string,
    changes: MemoryChange[],
    limits: MemoryWriteLimits,
    now: number,
  ): Promise<MemoryChangeOutcome[]> {
    return begin(this.db, this.dialect).execute((tx) =>
      writeBackUnderClaim(tx, this.dialect, claim, memoryStoreId, changes, limits, now),
    );
  }

  private underStoreLock(
    workspaceId: string,
    memoryStoreId: string,
    write: (tx: Tx, store: MemoryStoreRecord) => Promise<MemoryWriteResult>,
  ): Promise<MemoryWriteResult> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const store = await lockStore(tx, this.dialect, workspaceId, memoryStoreId);
      if (!store) return { ok: false, refusal: { kind: "store_not_found" } } as const;
      return write(tx, store);
    });
  }
}

/** Sorts as the cursor compares (`>` on strings): by UTF-16 code unit. */
function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function pageOf<T extends { id: string }>(rows: T[], limit: number, list: string): Page<T> {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, nextCursor: rows.length > limit && last ? encodeCursor(list, { id: last.id }) : null };
}
