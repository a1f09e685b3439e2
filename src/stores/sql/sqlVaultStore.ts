import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type { VaultListQuery, VaultRecord, VaultStore } from "../../control/vaultPorts.js";
import type { Page } from "../../kernel/pagination.js";
import { toVault, vaultRow } from "./credentialRows.js";
import { type Db, decodeCursor, encodeCursor } from "./db.js";
import { writeAudit } from "./sqlAdminAudit.js";

export class SqlVaultStore implements VaultStore {
  constructor(private readonly db: Db) {}

  async create(vault: VaultRecord, audit: AdminAuditEntry): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.insertInto("vaults").values(vaultRow(vault)).execute();
      await writeAudit(tx, audit);
    });
  }

  async get(workspaceId: string, vaultId: string): Promise<VaultRecord | null> {
    const row = await this.db
      .selectFrom("vaults")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", vaultId)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
    return row ? toVault(row) : null;
  }

  async update(vault: VaultRecord, audit: AdminAuditEntry): Promise<boolean> {
    const { id, workspace_id, created_at, deleted_at, ...changes } = vaultRow(vault);
    return this.db.transaction().execute(async (tx) => {
      const updated = await tx
        .updateTable("vaults")
        .set(changes)
        .where("workspace_id", "=", workspace_id)
        .where("id", "=", id)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  async list(workspaceId: string, q: VaultListQuery): Promise<Page<VaultRecord>> {
    const cursor = decodeCursor("vaults", q.cursor);
    let query = this.db
      .selectFrom("vaults")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("deleted_at", "is", null);
    if (!q.includeArchived) query = query.where("archived_at", "is", null);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toVault);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("vaults", { id: last.id }) : null,
    };
  }

  async delete(workspaceId: string, vaultId: string, now: number, audit: AdminAuditEntry): Promise<boolean> {
    return this.db.transaction().execute(async (tx) => {
      const result = await tx
        .updateTable("vaults")
        .set({ deleted_at: now, updated_at: now })
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", vaultId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      // The vault's credentials go with it: tombstoned heads, erased sealed material.
      await tx
        .deleteFrom("vault_credential_revisions")
        .where("credential_id", "in", (sub) =>
          sub.selectFrom("vault_credentials").select("id").where("vault_id", "=", vaultId),
        )
        .execute();
      await tx
        .updateTable("vault_credentials")
        .set({ deleted_at: now, updated_at: now })
        .where("vault_id", "=", vaultId)
        .where("deleted_at", "is", null)
        .execute();
      await writeAudit(tx, audit);
      return true;
    });
  }
}
