import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";

// Vaults and credentials (wire §2.7, §5). A credential is a mutable head plus immutable
// revisions; a revision holds its secret fields only as a sealed record (base64 text of the
// SecretStore's output) next to the identity the seal is bound to. Nothing here is plaintext.
// Same column conventions as 001: `bigint` milliseconds and counters, `text` ids and JSON.
export const vaults: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("vaults")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("display_name", "text", (c) => c.notNull())
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      // Deleted vaults stay as tombstones so a pinned session can be told "deleted", not "unknown".
      .addColumn("deleted_at", "bigint")
      .execute();
    await db.schema.createIndex("vaults_listing").on("vaults").columns(["workspace_id", "id"]).execute();

    await db.schema
      .createTable("vault_credentials")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("vault_id", "text", (c) => c.notNull())
      .addColumn("display_name", "text")
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("auth_type", "text", (c) => c.notNull())
      .addColumn("usage_key", "text", (c) => c.notNull())
      .addColumn("latest_revision", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .addColumn("deleted_at", "bigint")
      .execute();
    await db.schema
      .createIndex("vault_credentials_listing")
      .on("vault_credentials")
      .columns(["vault_id", "id"])
      .execute();
    // One live credential per vault per MCP server URL / environment variable name, so runtime
    // matching is never ambiguous; archiving or deleting frees the slot (partial index, both backends).
    await db.schema
      .createIndex("vault_credentials_one_live_per_usage")
      .on("vault_credentials")
      .columns(["vault_id", "usage_key"])
      .unique()
      .where(sql.ref("archived_at"), "is", null)
      .where(sql.ref("deleted_at"), "is", null)
      .execute();

    await db.schema
      .createTable("vault_credential_revisions")
      .addColumn("credential_id", "text", (c) => c.notNull())
      .addColumn("revision", "bigint", (c) => c.notNull())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("auth_json", "text", (c) => c.notNull())
      .addColumn("secret_fields_json", "text", (c) => c.notNull())
      .addColumn("seal_format", "bigint", (c) => c.notNull())
      .addColumn("master_key_id", "text", (c) => c.notNull())
      .addColumn("wrapped_key", "text", (c) => c.notNull())
      .addColumn("sealed_material", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("vault_credential_revisions_pk", ["credential_id", "revision"])
      .execute();
  },
};
