import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// The resources a session mounts (files, memory stores, repositories): one row each, the one truth
// the session's `resources` and every run's realization read. A repository's token is sealed under
// the master key (`token_sealed`, opened by `repo:<id>` at `token_revision`); never plaintext.
// A mount path is unique within its session. Same conventions as 001.
export const sessionResources: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("session_resources")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("mount_path", "text", (c) => c.notNull())
      .addColumn("file_id", "text")
      .addColumn("memory_store_id", "text")
      .addColumn("access", "text")
      .addColumn("name", "text")
      .addColumn("description", "text")
      .addColumn("instructions", "text")
      .addColumn("url", "text")
      .addColumn("checkout_json", "text")
      .addColumn("token_sealed", "text")
      .addColumn("token_revision", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("session_resources_mount")
      .on("session_resources")
      .columns(["session_id", "mount_path"])
      .unique()
      .execute();
    await db.schema
      .createIndex("session_resources_session")
      .on("session_resources")
      .columns(["workspace_id", "session_id", "id"])
      .execute();
    await db.schema
      .createIndex("session_resources_memory_store")
      .on("session_resources")
      .columns(["memory_store_id"])
      .execute();
  },
};
