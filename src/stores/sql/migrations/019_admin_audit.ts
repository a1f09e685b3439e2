import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// The admin audit: one row per change to agents, environments, vaults, credentials, API keys and
// workspaces, written in the change's own transaction. Digests of secret-free views only.
export const adminAudit: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("admin_audit")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("actor", "text", (c) => c.notNull())
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("resource_type", "text", (c) => c.notNull())
      .addColumn("resource_id", "text", (c) => c.notNull())
      .addColumn("revision", "bigint")
      .addColumn("before_digest", "text")
      .addColumn("after_digest", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("admin_audit_by_workspace")
      .on("admin_audit")
      .columns(["workspace_id", "created_at", "id"])
      .execute();
    await db.schema
      .createIndex("admin_audit_by_resource")
      .on("admin_audit")
      .columns(["workspace_id", "resource_id", "created_at"])
      .execute();
  },
};
