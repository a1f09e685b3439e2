import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Memory stores (resources/memory): a store, its memories' current state, and every memory's
// versions. Content is inline text (bounded by AWAKEN_MEMORY_MAX_BYTES) rather than a shared blob,
// so redacting one version erases exactly that version's copy. Same column conventions as 001.
export const memoryStores: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("memory_stores")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .execute();
    await db.schema
      .createIndex("memory_stores_listing")
      .on("memory_stores")
      .columns(["workspace_id", "id"])
      .execute();

    await db.schema
      .createTable("memories")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("memory_store_id", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("content", "text", (c) => c.notNull())
      .addColumn("content_sha256", "text", (c) => c.notNull())
      .addColumn("content_size_bytes", "bigint", (c) => c.notNull())
      .addColumn("memory_version_id", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    // One memory per path per store; overlapping paths (an ancestor) are refused by the store too.
    await db.schema
      .createIndex("memories_one_per_path")
      .on("memories")
      .columns(["memory_store_id", "path"])
      .unique()
      .execute();

    await db.schema
      .createTable("memory_versions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("memory_store_id", "text", (c) => c.notNull())
      .addColumn("memory_id", "text", (c) => c.notNull())
      .addColumn("operation", "text", (c) => c.notNull())
      .addColumn("path", "text")
      .addColumn("content", "text")
      .addColumn("content_sha256", "text")
      .addColumn("content_size_bytes", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("created_by_type", "text")
      .addColumn("created_by_id", "text")
      .addColumn("created_by_run_id", "text")
      .addColumn("redacted_at", "bigint")
      .addColumn("redacted_by_type", "text")
      .addColumn("redacted_by_id", "text")
      .execute();
    await db.schema
      .createIndex("memory_versions_listing")
      .on("memory_versions")
      .columns(["memory_store_id", "id"])
      .execute();
    await db.schema
      .createIndex("memory_versions_by_memory")
      .on("memory_versions")
      .columns(["memory_id", "id"])
      .execute();
  },
};
