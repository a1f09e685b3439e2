import type {
  AdminAuditEntry,
  AdminAuditQuery,
  AdminAuditReader,
  AuditAction,
  AuditResourceType,
} from "../../control/adminAudit.js";
import type { Page } from "../../kernel/pagination.js";
import { type DbOrTx, decodeCursor, encodeCursor } from "./db.js";
import type { Database } from "./schema.js";

/**
 * Writes audit entries with the executor of the change's own transaction, so the change and its
 * record commit (or roll back) together. Stores call it only once their change took effect.
 */
export async function writeAudit(tx: DbOrTx, ...entries: AdminAuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await tx.insertInto("admin_audit").values(entries.map(auditRow)).execute();
}

export class SqlAdminAudit implements AdminAuditReader {
  constructor(private readonly db: DbOrTx) {}

  async list(workspaceId: string, q: AdminAuditQuery): Promise<Page<AdminAuditEntry>> {
    const cursor = decodeCursor("admin_audit", q.cursor);
    let query = this.db.selectFrom("admin_audit").selectAll().where("workspace_id", "=", workspaceId);
    if (q.resourceType !== undefined) query = query.where("resource_type", "=", q.resourceType);
    if (q.resourceId !== undefined) query = query.where("resource_id", "=", q.resourceId);
    if (q.action !== undefined) query = query.where("action", "=", q.action);
    if (cursor && typeof cursor.at === "number" && typeof cursor.id === "string") {
      const { at, id } = cursor;
      query = query.where((eb) =>
        eb.or([eb("created_at", "<", at), eb.and([eb("created_at", "=", at), eb("id", "<", id)])]),
      );
    }
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toEntry);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor:
        rows.length > q.limit && last
          ? encodeCursor("admin_audit", { at: last.createdAt, id: last.id })
          : null,
    };
  }
}

function auditRow(e: AdminAuditEntry): Database["admin_audit"] {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    actor: e.actor,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: e.resourceId,
    revision: e.revision,
    before_digest: e.beforeDigest,
    after_digest: e.afterDigest,
    created_at: e.createdAt,
  };
}

function toEntry(r: Database["admin_audit"]): AdminAuditEntry {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    actor: r.actor,
    // Shown as written: a value a newer build wrote is still what happened.
    action: r.action as AuditAction,
    resourceType: r.resource_type as AuditResourceType,
    resourceId: r.resource_id,
    revision: r.revision === null ? null : Number(r.revision),
    beforeDigest: r.before_digest,
    afterDigest: r.after_digest,
    createdAt: Number(r.created_at),
  };
}
