import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// MCP tunnels (coordinator/tunnels): a tunnel with its connector token kept sealed (reveal answers
// it) and hashed (a connecting connector is found by the hash), and its CA certificates.
export const tunnels: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("tunnels")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("display_name", "text")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("token_id", "text", (c) => c.notNull())
      .addColumn("token_hash", "text", (c) => c.notNull())
      .addColumn("token_sealed", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .execute();
    // A domain is never allocated twice, even after its tunnel is archived (SDK).
    await db.schema.createIndex("tunnels_domain").on("tunnels").column("domain").unique().execute();
    await db.schema.createIndex("tunnels_token").on("tunnels").column("token_hash").unique().execute();
    await db.schema.createIndex("tunnels_listing").on("tunnels").columns(["workspace_id", "id"]).execute();

    await db.schema
      .createTable("tunnel_certificates")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("tunnel_id", "text", (c) => c.notNull())
      .addColumn("pem", "text", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("expires_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .execute();
    await db.schema
      .createIndex("tunnel_certificates_listing")
      .on("tunnel_certificates")
      .columns(["tunnel_id", "id"])
      .execute();
  },
};
