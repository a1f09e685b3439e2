import { sql } from "kysely";
import type { Page } from "../../kernel/pagination.js";
import type { FileCreateOutcome, FileListQuery, FileRecord, FileStore } from "../../resources/files/ports.js";
import type { BlobDigest } from "../../resources/ports.js";
import { begin, type Db, decodeCursor, encodeCursor, type SqlDialect } from "./db.js";
import type { Database } from "./schema.js";

type FileRow = Database["files"];

export class SqlFileStore implements FileStore {
  readonly family = "files" as const;

  constructor(
    protected readonly db: Db,
    protected readonly dialect: SqlDialect,
  ) {}

  async create(record: FileRecord, quotaBytes: number): Promise<FileCreateOutcome> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      // PostgreSQL runs uploads side by side: the workspace's uploads take turns deciding the quota.
      // SQLite has one writer, so its transaction already does.
      if (this.dialect === "postgres") {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`files:${record.workspaceId}`}, 0))`.execute(
          tx,
        );
      }
      const used = await tx
        .selectFrom("files")
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>("size_bytes"), eb.lit(0)).as("total"))
        .where("workspace_id", "=", record.workspaceId)
        .executeTakeFirstOrThrow();
      const usedBytes = Number(used.total);
      if (usedBytes + record.sizeBytes > quotaBytes) return { created: false as const, usedBytes };
      await tx.insertInto("files").values(toRow(record)).execute();
      return { created: true as const };
    });
  }

  async get(workspaceId: string, fileId: string): Promise<FileRecord | null> {
    const row = await this.db
      .selectFrom("files")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", fileId)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async list(workspaceId: string, q: FileListQuery): Promise<Page<FileRecord>> {
    const cursor = decodeCursor("files", q.cursor);
    let query = this.db.selectFrom("files").selectAll().where("workspace_id", "=", workspaceId);
    if (q.scopeId !== null) query = query.where("scope_id", "=", q.scopeId);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toRecord);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("files", { id: last.id }) : null,
    };
  }

  async listByIds(
    workspaceId: string,
    ids: readonly string[],
    scopeId: string | null,
  ): Promise<FileRecord[]> {
    if (ids.length === 0) return [];
    let query = this.db
      .selectFrom("files")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "in", [...ids]);
    if (scopeId !== null) query = query.where("scope_id", "=", scopeId);
    const rows = await query.orderBy("id", "desc").execute();
    return rows.map(toRecord);
  }

  async delete(workspaceId: string, fileId: string): Promise<FileRecord | null> {
    const row = await this.db
      .deleteFrom("files")
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", fileId)
      .returningAll()
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async references(digest: BlobDigest): Promise<boolean> {
    const row = await this.db
      .selectFrom("files")
      .select("id")
      .where("digest", "=", digest)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }
}

function toRow(r: FileRecord): FileRow {
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    filename: r.filename,
    mime_type: r.mimeType,
    size_bytes: r.sizeBytes,
    digest: r.digest,
    created_at: r.createdAt,
    downloadable: r.downloadable ? 1 : 0,
    scope_id: r.scopeId,
    expires_at: r.expiresAt,
  };
}

function toRecord(row: FileRow): FileRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    filename: row.filename,
    mimeType: row.mime_type,
    sizeBytes: Number(row.size_bytes),
    digest: row.digest,
    createdAt: Number(row.created_at),
    downloadable: Number(row.downloadable) === 1,
    scopeId: row.scope_id,
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}
