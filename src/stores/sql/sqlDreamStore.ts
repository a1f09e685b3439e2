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
  DreamUsage,
} from "../../dreams/ports.js";
import type { Page } from "../../kernel/pagination.js";
import type { MemoryLimits } from "../../resources/memory/memoryLimits.js";
import type { MemoryStoreRecord } from "../../resources/memory/ports.js";
import { begin, type Db, decodeCursor, encodeCursor, fromJson, type SqlDialect, toJson } from "./db.js";
import { storeRow } from "./memoryRows.js";
import { applyCreate } from "./memoryWrites.js";
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

  async create(dream: DreamRecord): Promise<void> {
    await this.db.insertInto("dreams").values(rowOf(dream)).execute();
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
    output: { store: MemoryStoreRecord; memories: DreamOutputMemory[]; usage: DreamUsage },
    limits: MemoryLimits,
    now: number,
  ): Promise<boolean> {
    try {
      return await begin(this.db, this.dialect).execute(async (tx) => {
        // The dream's end first: on PostgreSQL its row lock orders concurrent finishers, and the
        // second sees the dream ended and writes nothing. SQLite has one writer at a time.
        const ended = await tx
          .updateTable("dreams")
          .set({
            status: "completed",
            output_store_id: output.store.id,
            usage_json: toJson(output.usage),
            ended_at: now,
          })
          .where("workspace_id", "=", workspaceId)
          .where("id", "=", id)
          .where("status", "in", OPEN)
          .executeTakeFirst();
        if (Number(ended.numUpdatedRows) !== 1) return false;
        await tx.insertInto("memory_stores").values(storeRow(output.store)).execute();
        for (const memory of output.memories) {
          const written = await applyCreate(
            tx,
            output.store,
            { ...memory, author: null },
            { maxContentBytes: limits.maxContentBytes, maxMemoriesPerStore: limits.maxMemoriesPerStore },
            now,
          );
          if (!written.ok) throw new OutputRefused(written.refusal.kind);
        }
        return true;
      });
    } catch (error) {
      if (!(error instanceof OutputRefused)) throw error;
      // Nothing was written; the output was checked before, so this is a path the store refuses.
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
      error_json: toJson(error),
      usage_json: toJson(usage),
      ended_at: now,
    });
  }

  async cancel(workspaceId: string, id: string, now: number): Promise<boolean> {
    return this.end(workspaceId, id, { status: "canceled", ended_at: now });
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
    changes: Partial<Pick<DreamRow, "status" | "error_json" | "usage_json" | "ended_at">>,
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
