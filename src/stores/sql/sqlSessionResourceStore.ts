import type { Page } from "../../kernel/pagination.js";
import type { SessionResourceRecord } from "../../resources/ports.js";
import type { SessionResourceStore } from "../../resources/sessionResources/ports.js";
import {
  begin,
  type Db,
  type DbOrTx,
  decodeCursor,
  encodeCursor,
  fromJson,
  type SqlDialect,
  toJson,
} from "./db.js";
import type { SessionResourceTables } from "./tables/sessionResourceTables.js";

type Row = SessionResourceTables["session_resources"];

export class SqlSessionResourceStore implements SessionResourceStore {
  readonly family = "sessionResources" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}

  async sessionExists(workspaceId: string, sessionId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom("sessions")
      .select("id")
      .where("id", "=", sessionId)
      .where("workspace_id", "=", workspaceId)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return row !== undefined;
  }

  async add(
    record: SessionResourceRecord,
    check: (existing: readonly SessionResourceRecord[]) => void,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      // The session's row is the lock every add of the session takes: the count and mount checks
      // see every resource an add committed before.
      let session = tx
        .selectFrom("sessions")
        .select("id")
        .where("id", "=", record.sessionId)
        .where("workspace_id", "=", record.workspaceId)
        .where("deleted_at", "is", null);
      if (this.dialect === "postgres") session = session.forUpdate();
      if (!(await session.executeTakeFirst())) return false;
      const existing = await tx
        .selectFrom("session_resources")
        .selectAll()
        .where("workspace_id", "=", record.workspaceId)
        .where("session_id", "=", record.sessionId)
        .execute();
      check(existing.map(rowToRecord));
      await insertSessionResources(tx, [record]);
      return true;
    });
  }

  async get(workspaceId: string, sessionId: string, id: string): Promise<SessionResourceRecord | null> {
    const row = await this.db
      .selectFrom("session_resources")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "=", sessionId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? rowToRecord(row) : null;
  }

  async getByMemoryStore(
    workspaceId: string,
    sessionId: string,
    memoryStoreId: string,
  ): Promise<SessionResourceRecord | null> {
    const row = await this.db
      .selectFrom("session_resources")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "=", sessionId)
      .where("type", "=", "memory_store")
      .where("memory_store_id", "=", memoryStoreId)
      .executeTakeFirst();
    return row ? rowToRecord(row) : null;
  }

  async list(
    workspaceId: string,
    sessionId: string,
    query: { limit: number; cursor: string | null },
  ): Promise<Page<SessionResourceRecord>> {
    const cursor = decodeCursor("session_resources", query.cursor);
    let q = this.db
      .selectFrom("session_resources")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "=", sessionId);
    if (cursor && typeof cursor.id === "string") q = q.where("id", ">", cursor.id);
    const rows = await q
      .orderBy("id", "asc")
      .limit(query.limit + 1)
      .execute();
    const data = rows.slice(0, query.limit).map(rowToRecord);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor:
        rows.length > query.limit && last ? encodeCursor("session_resources", { id: last.id }) : null,
    };
  }

  async listAll(
    workspaceId: string,
    sessionIds: readonly string[],
  ): Promise<Map<string, SessionResourceRecord[]>> {
    const bySession = new Map<string, SessionResourceRecord[]>(sessionIds.map((id) => [id, []]));
    if (sessionIds.length === 0) return bySession;
    const rows = await this.db
      .selectFrom("session_resources")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "in", [...sessionIds])
      .orderBy("id", "asc")
      .execute();
    for (const row of rows) bySession.get(row.session_id)?.push(rowToRecord(row));
    return bySession;
  }

  async rotateToken(
    workspaceId: string,
    sessionId: string,
    id: string,
    sealedToken: string,
    tokenRevision: number,
    now: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable("session_resources")
      .set({ token_sealed: sealedToken, token_revision: tokenRevision, updated_at: now })
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "=", sessionId)
      .where("id", "=", id)
      .where("type", "=", "github_repository")
      // The revision read before sealing: a concurrent rotation wins, this one is refused.
      .where("token_revision", "=", tokenRevision - 1)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(workspaceId: string, sessionId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("session_resources")
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "=", sessionId)
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

/** Writes a session's resources in the caller's transaction (the session's own, at creation). */
export async function insertSessionResources(
  tx: DbOrTx,
  records: readonly SessionResourceRecord[],
): Promise<void> {
  if (records.length === 0) return;
  await tx.insertInto("session_resources").values(records.map(recordToRow)).execute();
}

/** Removes the sessions' resources and their sealed tokens (a session's deletion, an erasure). */
export async function deleteSessionResources(tx: DbOrTx, sessionIds: readonly string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  await tx
    .deleteFrom("session_resources")
    .where("session_id", "in", [...sessionIds])
    .execute();
}

function recordToRow(r: SessionResourceRecord): Row {
  const base = {
    id: r.id,
    workspace_id: r.workspaceId,
    session_id: r.sessionId,
    type: r.type,
    mount_path: r.mountPath,
    file_id: null,
    memory_store_id: null,
    access: null,
    name: null,
    description: null,
    instructions: null,
    url: null,
    checkout_json: null,
    token_sealed: null,
    token_revision: 0,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
  switch (r.type) {
    case "file":
      return { ...base, file_id: r.fileId };
    case "memory_store":
      return {
        ...base,
        memory_store_id: r.memoryStoreId,
        access: r.access,
        name: r.name,
        description: r.description,
        instructions: r.instructions,
      };
    case "github_repository":
      return {
        ...base,
        url: r.url,
        checkout_json: r.checkout ? toJson(r.checkout) : null,
        token_sealed: r.sealedToken,
        token_revision: r.tokenRevision,
      };
  }
}

/** A stored row as its record (also for stores that read the rows joined to others). */
export function rowToRecord(row: Row): SessionResourceRecord {
  const base = {
    id: row.id,
    workspaceId: row.workspace_id,
    sessionId: row.session_id,
    mountPath: row.mount_path,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
  if (row.type === "file") return { ...base, type: "file", fileId: row.file_id ?? "" };
  if (row.type === "memory_store") {
    return {
      ...base,
      type: "memory_store",
      memoryStoreId: row.memory_store_id ?? "",
      access: row.access === "read_only" ? "read_only" : "read_write",
      name: row.name ?? "",
      description: row.description ?? "",
      instructions: row.instructions,
    };
  }
  return {
    ...base,
    type: "github_repository",
    url: row.url ?? "",
    checkout: row.checkout_json ? fromJson(row.checkout_json) : null,
    sealedToken: row.token_sealed,
    tokenRevision: Number(row.token_revision),
  };
}
