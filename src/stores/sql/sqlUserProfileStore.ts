import { type Expression, type SqlBool, sql } from "kysely";
import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { GoogleDataControls } from "../../control/googleDataControls.js";
import {
  EMPTY_DETAILS,
  type ExternalUserDetails,
  type UserProfileAccessType,
  type UserProfileListQuery,
  type UserProfileRecord,
  type UserProfileStore,
} from "../../control/userProfiles.js";
import type { Page } from "../../kernel/pagination.js";
import { begin, type Db, decodeCursor, encodeCursor, fromJson, type SqlDialect, toJson } from "./db.js";
import { writeAudit } from "./sqlAdminAudit.js";
import type { UserProfileTables } from "./tables/userProfileTables.js";

type Row = UserProfileTables["user_profiles"];

/** `order_by=name` ignores the case of ASCII letters only (SDK), so the key is made here, not by SQL. */
const nameKey = (name: string | null) => (name ?? "").replace(/[A-Z]/g, (c) => c.toLowerCase());

function toRow(p: UserProfileRecord): Row {
  return {
    id: p.id,
    workspace_id: p.workspaceId,
    access_type: p.accessType,
    name: p.name,
    name_key: nameKey(p.name),
    unnamed: p.name === null ? 1 : 0,
    metadata_json: toJson(p.metadata),
    details_json: toJson(p.details),
    data_controls_json: p.dataControls === null ? null : toJson(p.dataControls),
    created_at: p.createdAt,
    updated_at: p.updatedAt,
    deleted_at: null,
  };
}

function toRecord(r: Row): UserProfileRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    accessType: r.access_type as UserProfileAccessType,
    name: r.name,
    metadata: fromJson<Record<string, string>>(r.metadata_json),
    details: { ...EMPTY_DETAILS, ...fromJson<ExternalUserDetails>(r.details_json) },
    dataControls: r.data_controls_json === null ? null : fromJson<GoogleDataControls>(r.data_controls_json),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

const LIST = "user_profiles";

/** Control's user profiles on either dialect; a delete keeps a tombstone row (no details). */
export class SqlUserProfileStore implements UserProfileStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect,
  ) {}

  async create(record: UserProfileRecord, audit: AdminAuditEntry): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto("user_profiles").values(toRow(record)).execute();
      await writeAudit(tx, audit);
    });
  }

  async get(workspaceId: string, id: string): Promise<UserProfileRecord | null> {
    const row = await this.db
      .selectFrom("user_profiles")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  modify(
    workspaceId: string,
    id: string,
    change: (current: UserProfileRecord) => { next: UserProfileRecord; audit: AdminAuditEntry },
  ): Promise<UserProfileRecord | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const row = await tx
        .selectFrom("user_profiles")
        .selectAll()
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", id)
        .where("deleted_at", "is", null)
        .$if(this.dialect === "postgres", (qb) => qb.forUpdate())
        .executeTakeFirst();
      if (!row) return null;
      const { next, audit } = change(toRecord(row));
      const { id: _id, workspace_id: _ws, created_at: _created, ...columns } = toRow(next);
      await tx.updateTable("user_profiles").set(columns).where("id", "=", id).execute();
      await writeAudit(tx, audit);
      return next;
    });
  }

  async list(workspaceId: string, q: UserProfileListQuery): Promise<Page<UserProfileRecord>> {
    const cursor = decodeCursor(`${LIST}:${q.orderBy}:${q.order}`, q.cursor);
    const desc = q.order === "desc";
    let query = this.db
      .selectFrom("user_profiles")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("deleted_at", "is", null);
    if (q.orderBy === "created_at") {
      // Ids sort by creation time (kernel/ids.ts): the id alone orders and positions the list.
      if (cursor && typeof cursor.id === "string") query = query.where("id", desc ? "<" : ">", cursor.id);
      query = query.orderBy("id", q.order);
    } else {
      // Named profiles first in either direction (SDK), then the name key, then the id.
      const key = this.byteOrder(sql.ref("name_key"));
      if (cursor && typeof cursor.id === "string" && typeof cursor.key === "string") {
        const u = cursor.unnamed === "1" ? 1 : 0;
        const op = desc ? sql.raw("<") : sql.raw(">");
        const after = sql<SqlBool>`(unnamed > ${u} or (unnamed = ${u} and (${key} ${op} ${this.byteOrder(sql.val(cursor.key))} or (name_key = ${cursor.key} and id ${op} ${cursor.id}))))`;
        query = query.where(after);
      }
      query = query.orderBy("unnamed", "asc").orderBy(key, q.order).orderBy("id", q.order);
    }
    const rows = await query.limit(q.limit + 1).execute();
    const data = rows.slice(0, q.limit);
    const last = data[data.length - 1];
    const position = (r: Row): Record<string, string> =>
      q.orderBy === "created_at" ? { id: r.id } : { id: r.id, key: r.name_key, unnamed: String(r.unnamed) };
    return {
      data: data.map(toRecord),
      nextCursor:
        rows.length > q.limit && last
          ? encodeCursor(`${LIST}:${q.orderBy}:${q.order}`, position(last))
          : null,
    };
  }

  async delete(workspaceId: string, id: string, now: number, audit: AdminAuditEntry): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      // The tombstone keeps the id (never answered or reused); every detail the platform stated goes.
      const result = await tx
        .updateTable("user_profiles")
        .set({
          name: null,
          name_key: "",
          unnamed: 1,
          metadata_json: "{}",
          details_json: "{}",
          data_controls_json: null,
          updated_at: now,
          deleted_at: now,
        })
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", id)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  /** Text compared byte by byte on both dialects (PostgreSQL's default collation is the locale's). */
  private byteOrder(value: Expression<unknown>) {
    return this.dialect === "postgres" ? sql<string>`${value} collate "C"` : sql<string>`${value}`;
  }
}
