import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Custom skills: a head naming its latest version, immutable versions, and each version's files
// as blob digests (the bytes live in the blob store). Same conventions as 001: `bigint`
// milliseconds and sizes, `text` ids.
export const skills: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("skills")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("display_name", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("latest_version_id", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("skills_listing").on("skills").columns(["workspace_id", "id"]).execute();

    await db.schema
      .createTable("skill_versions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("skill_id", "text", (c) => c.notNull())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("content_digest", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("skill_versions_listing")
      .on("skill_versions")
      .columns(["skill_id", "id"])
      .execute();

    await db.schema
      .createTable("skill_version_files")
      .addColumn("version_id", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("digest", "text", (c) => c.notNull())
      .addColumn("size_bytes", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("skill_version_files_pk", ["version_id", "path"])
      .execute();
    // "Does anything still reference this blob", asked before a blob is deleted (as for files).
    await db.schema
      .createIndex("skill_version_files_digest")
      .on("skill_version_files")
      .columns(["digest"])
      .execute();
  },
};
