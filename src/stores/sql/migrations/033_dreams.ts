import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Dreams (src/dreams): one row per dream. Its output store is written with its end in one
// transaction (sqlDreamStore.ts), so `output_store_id` is set exactly when `status` is completed.
export const dreams: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("dreams")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("inputs_json", "text", (c) => c.notNull())
      .addColumn("instructions", "text")
      .addColumn("model_json", "text", (c) => c.notNull())
      .addColumn("output_behavior_json", "text", (c) => c.notNull())
      .addColumn("output_store_id", "text")
      .addColumn("session_id", "text")
      // The input store an `update_existing` dream writes, while the dream has not ended (else null).
      .addColumn("holds_store_id", "text")
      .addColumn("error_json", "text")
      .addColumn("usage_json", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("ended_at", "bigint")
      .addColumn("archived_at", "bigint")
      .execute();
    await db.schema.createIndex("dreams_listing").on("dreams").columns(["workspace_id", "id"]).execute();
    // One `update_existing` dream per store at a time (NULLs never collide, on both backends).
    await db.schema.createIndex("dreams_one_holder").on("dreams").column("holds_store_id").unique().execute();
    // The sweep's read: dreams not yet ended.
    await db.schema.createIndex("dreams_active").on("dreams").columns(["status", "id"]).execute();
  },
};
