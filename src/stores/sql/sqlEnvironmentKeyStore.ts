import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { EnvironmentKeyRecord, EnvironmentKeyStore, ListQuery, Page } from "../../coordinator/ports.js";
import { type Db, decodeCursor, encodeCursor } from "./db.js";
import type { Database } from "./schema.js";
import { writeAudit } from "./sqlAdminAudit.js";

type Row = Database["environment_keys"];

/** Environment keys (stored as SHA-256 hashes), dialect-neutral. */
export class SqlEnvironmentKeyStore implements EnvironmentKeyStore {
  constructor(private readonly db: Db) {}

  async create(r: EnvironmentKeyRecord, audit: AdminAuditEntry): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx
        .insertInto("environment_keys")
        .values({
          id: r.id,
          workspace_id: r.workspaceId,
          environment_id: r.environmentId,
          name: r.name,
          key_hash: r.keyHash,
          key_hint: r.keyHint,
          created_at: r.createdAt,
          revoked_at: r.revokedAt,
        })
        .execute();
      await writeAudit(tx, audit);
    });
  }

  async list(workspaceId: string, environmentId: string, q: ListQuery): Promise<Page<EnvironmentKeyRecord>> {
    const cursor = decodeCursor("environment_keys", q.cursor);
    let query = this.db
      .selectFrom("environment_keys")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("environment_id", "=", environmentId);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toRecord);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("environment_keys", { id: last.id }) : null,
    };
  }

  async get(workspaceId: string, environmentId: string, keyId: string): Promise<EnvironmentKeyRecord | null> {
    const row = await this.db
      .selectFrom("environment_keys")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("environment_id", "=", environmentId)
      .where("id", "=", keyId)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async revoke(
    workspaceId: string,
    environmentId: string,
    keyId: string,
    now: number,
    audit: AdminAuditEntry,
  ): Promise<EnvironmentKeyRecord | null> {
    await this.db.transaction().execute(async (tx) => {
      const revoked = await tx
        .updateTable("environment_keys")
        .set({ revoked_at: now })
        .where("workspace_id", "=", workspaceId)
        .where("environment_id", "=", environmentId)
        .where("id", "=", keyId)
        .where("revoked_at", "is", null)
        .executeTakeFirst();
      // A second revoke changes nothing and records nothing.
      if (Number(revoked.numUpdatedRows) === 1) await writeAudit(tx, audit);
    });
    return this.get(workspaceId, environmentId, keyId);
  }

  async findByHash(keyHash: string): Promise<EnvironmentKeyRecord | null> {
    const row = await this.db
      .selectFrom("environment_keys")
      .selectAll()
      .where("key_hash", "=", keyHash)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }
}

function toRecord(row: Row): EnvironmentKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    environmentId: row.environment_id,
    name: row.name,
    keyHash: row.key_hash,
    keyHint: row.key_hint,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}
