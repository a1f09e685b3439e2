import type { Selectable } from "kysely";
import type {
  DreamError,
  DreamInput,
  DreamListQuery,
  DreamOutputBehavior,
  DreamOutputMemory,
  DreamRecord,
  DreamStatus,
  DreamStore,
  DreamTarget,
  DreamUsage,
} from "../../dreams/ports.js";
import { newId } from "../../kernel/ids.js";
import type { Page } from "../../kernel/pagination.js";
import type { MemoryLimits } from "../../resources/memory/memoryLimits.js";
import type { MemoryStoreRecord, MemoryWriteLimits } from "../../resources/memory/ports.js";
import {
  begin,
  type Db,
  decodeCursor,
  encodeCursor,
  fromJson,
  type SqlDialect,
  type Tx,
  toJson,
} from "./db.js";
import { storeRow } from "./memoryRows.js";
import { applyCreate, applyDelete, applyUpdate, lockStore } from "./memoryWrites.js";
import type { DreamTables } from "./tables/dreamTables.js";

type DreamRow = Selectable<DreamTables["dreams"]>;
const OPEN: DreamStatus[] = ["pending", "running"];

/** Thrown inside `complete`'s transaction to undo it: a memory the checked output still refused. */
class OutputRefused extends Error {}

export class SqlDreamStore implements DreamStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect,
  ) {}

  async create(dream: DreamRecord): Promise<{ ok: true } | { ok: false; heldBy: string }> {
    const row = rowOf(dream);
    try {
      await this.db.insertInto("dreams").values(row).execute();
      return { ok: true };
    } catch (error) {
      // The one-holder index refused it: name the holder (read after the refusal, so it exists
      // unless it has just ended, in which case the error stands and a retry succeeds).
      const heldBy =
        row.holds_store_id === null ? null : await this.holderOf(dream.workspaceId, row.holds_store_id);
      if (heldBy === null) throw error;
      return { ok: false, heldBy };
    }
  }

  async holderOf(workspaceId: string, storeId: string): Promise<string | null> {
    const row = await this.db
      .selectFrom("dreams")
      .select("id")
      .where("holds_store_id", "=", storeId)
      .where("workspace_id", "=", workspaceId)
      .executeTakeFirst();
    return row?.id ?? null;
  }

  async get(workspaceId: string, id: string): Promise<DreamRecord | null> {
    const row = await this.db
      .selectFrom("dreams")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toDream(row) : null;
  }

  async list(workspaceId: string, q: DreamListQuery): Promise<Page<DreamRecord>> {
    const cursor = decodeCursor("dreams", q.cursor);
    let query = this.db.selectFrom("dreams").selectAll().where("workspace_id", "=", workspaceId);
    if (!q.includeArchived) query = query.where("archived_at", "is", null);
    if (q.statuses !== null) query = query.where("status", "in", q.statuses);
    if (q.createdAtGt !== null) query = query.where("created_at", ">", q.createdAtGt);
    if (q.createdAtLt !== null) query = query.where("created_at", "<", q.createdAtLt);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toDream);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("dreams", { id: last.id }) : null,
    };
  }

  async markRunning(workspaceId: string, id: string): Promise<boolean> {
    const result = await this.db
      .updateTable("dreams")
      .set({ status: "running" })
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .where("status", "=", "pending")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async complete(
    workspaceId: string,
    id: string,
    output: { target: DreamTarget; memories: DreamOutputMemory[]; usage: DreamUsage },
    limits: MemoryLimits,
    now: number,
  ): Promise<boolean> {
    const writeLimits = {
      maxContentBytes: limits.maxContentBytes,
      maxMemoriesPerStore: limits.maxMemoriesPerStore,
    };
    const { target } = output;
    try {
      return await begin(this.db, this.dialect).execute(async (tx) => {
        // The dream's end first: on PostgreSQL its row lock orders concurrent finishers, and the
        // second sees the dream ended and writes nothing. SQLite has one writer at a time.
        const ended = await tx
          .updateTable("dreams")
          .set({
            status: "completed",
            output_store_id: target.kind === "new" ? target.store.id : target.storeId,
            holds_store_id: null,
            usage_json: toJson(output.usage),
            ended_at: now,
          })
          .where("workspace_id", "=", workspaceId)
          .where("id", "=", id)
          .where("status", "in", OPEN)
          .executeTakeFirst();
        if (Number(ended.numUpdatedRows) !== 1) return false;
        if (target.kind === "new") {
          await tx.insertInto("memory_stores").values(storeRow(target.store)).execute();
          await writeAll(tx, target.store, output.memories, writeLimits, now);
        } else {
          const store = await lockStore(tx, this.dialect, workspaceId, target.storeId);
          if (!store) throw new OutputRefused("store_not_found");
          await replaceAll(tx, store, output.memories, writeLimits, now);
        }
        return true;
      });
    } catch (error) {
      if (!(error instanceof OutputRefused)) throw error;
      // Nothing was written: the output was checked before, so the store's state refused it.
      return this.fail(
        workspaceId,
        id,
        {
          type: "invalid_output",
          message: `The dreamer's answer was refused by the memory store (${error.message}).`,
        },
        output.usage,
        now,
      ).then(() => false);
    }
  }

  async fail(workspaceId: string, id: string, error: DreamError, usage: DreamUsage, now: number) {
    return this.end(workspaceId, id, {
      status: "failed",
      holds_store_id: null,
      error_json: toJson(error),
      usage_json: toJson(usage),
      ended_at: now,
    });
  }

  async cancel(workspaceId: string, id: string, now: number): Promise<boolean> {
    return this.end(workspaceId, id, { status: "canceled", holds_store_id: null, ended_at: now });
  }

  async archive(workspaceId: string, id: string, now: number): Promise<void> {
    await this.db
      .updateTable("dreams")
      .set({ archived_at: now })
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .where("archived_at", "is", null)
      .execute();
  }

  async active(limit: number): Promise<Array<{ workspaceId: string; id: string }>> {
    const rows = await this.db
      .selectFrom("dreams")
      .select(["workspace_id", "id"])
      .where("status", "in", OPEN)
      .orderBy("status")
      .orderBy("id")
      .limit(limit)
      .execute();
    return rows.map((r) => ({ workspaceId: r.workspace_id, id: r.id }));
  }

  private async end(
    workspaceId: string,
    id: string,
    changes: Partial<Pick<DreamRow, "status" | "error_json" | "usage_json" | "ended_at" | "holds_store_id">>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable("dreams")
      .set(changes)
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .where("status", "in", OPEN)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

/** A new store's memories, each created with its version. */
async function writeAll(
  tx: Tx,
  store: MemoryStoreRecord,
  memories: DreamOutputMemory[],
  limits: MemoryWriteLimits,
  now: number,
): Promise<void> {
  for (const memory of memories) {
    const written = await applyCreate(tx, store, { ...memory, author: null }, limits, now);
    if (!written.ok) throw new OutputRefused(written.refusal.kind);
  }
}

/**
 * The input store made exactly `memories`, by path: deletions first (freeing their paths), then
 * changed contents, then new memories; an unchanged memory keeps its version.
 */
async function replaceAll(
  tx: Tx,
  store: MemoryStoreRecord,
  memories: DreamOutputMemory[],
  limits: MemoryWriteLimits,
  now: number,
): Promise<void> {
  if (store.archivedAt !== null) throw new OutputRefused("store_archived");
  const current = await tx
    .selectFrom("memories")
    .select(["id", "path", "content"])
    .where("memory_store_id", "=", store.id)
    .execute();
  const wanted = new Map(memories.map((m) => [m.path, m]));
  const byPath = new Map(current.map((m) => [m.path, m]));
  const version = () => ({ versionId: newId("memver", now), expectedContentSha256: null, author: null });
  for (const memory of current) {
    if (wanted.has(memory.path)) continue;
    const done = await applyDelete(tx, store, memory.id, version(), now);
    if (!done.ok) throw new OutputRefused(done.refusal.kind);
  }
  for (const memory of memories) {
    const existing = byPath.get(memory.path);
    if (!existing || existing.content === memory.content) continue;
    const done = await applyUpdate(
      tx,
      store,
      existing.id,
      { ...version(), path: null, content: memory.content },
      now,
    );
    if (!done.ok) throw new OutputRefused(done.refusal.kind);
  }
  for (const memory of memories) {
    if (byPath.has(memory.path)) continue;
    const done = await applyCreate(tx, store, { ...memory, author: null }, limits, now);
    if (!done.ok) throw new OutputRefused(done.refusal.kind);
  }
}

function rowOf(d: DreamRecord): DreamRow {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    status: d.status,
    inputs_json: toJson(d.inputs),
    instructions: d.instructions,
    model_json: toJson(d.model),
    output_behavior_json: toJson(d.outputBehavior),
    output_store_id: d.outputStoreId,
    session_id: d.sessionId,
    holds_store_id:
      d.outputBehavior.type === "update_existing" && OPEN.includes(d.status)
        ? d.outputBehavior.memory_store_id
        : null,
    error_json: d.error === null ? null : toJson(d.error),
    usage_json: d.usage === null ? null : toJson(d.usage),
    created_at: d.createdAt,
    ended_at: d.endedAt,
    archived_at: d.archivedAt,
  };
}

function toDream(r: DreamRow): DreamRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    status: r.status as DreamStatus,
    inputs: fromJson<DreamInput[]>(r.inputs_json),
    instructions: r.instructions,
    model: fromJson<DreamRecord["model"]>(r.model_json),
    outputBehavior: fromJson<DreamOutputBehavior>(r.output_behavior_json),
    outputStoreId: r.output_store_id,
    sessionId: r.session_id,
    error: r.error_json === null ? null : fromJson<DreamError>(r.error_json),
    usage: r.usage_json === null ? null : fromJson<DreamUsage>(r.usage_json),
    createdAt: Number(r.created_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
    archivedAt: r.archived_at === null ? null : Number(r.archived_at),
  };
}
