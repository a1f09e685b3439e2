import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Files (resources/files): metadata rows whose bytes are content-addressed blobs (023). Listing is
// newest first per workspace (ids are time-ordered), optionally within a scope (a session); the
// digest index answers "does anything still reference this blob" before a blob is deleted.
export const files: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("files")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("filename", "text", (c) => c.notNull())
      .addColumn("mime_type", "text", (c) => c.notNull())
      .addColumn("size_bytes", "bigint", (c) => c.notNull())
      .addColumn("digest", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("downloadable", "integer", (c) => c.notNull())
      .addColumn("scope_id", "text")
      .addColumn("expires_at", "bigint")
      .execute();
    await db.schema.createIndex("files_listing").on("files").columns(["workspace_id", "id"]).execute();
    await db.schema
      .createIndex("files_scope_listing")
      .on("files")
      .columns(["workspace_id", "scope_id", "id"])
      .execute();
    await db.schema.createIndex("files_digest").on("files").columns(["digest"]).execute();
  },
};
