import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// User profiles (control/userProfiles.ts): the end customers a workspace serves, each the data
// subject of its sessions' consent and erasure. A deleted profile keeps its row as a tombstone
// (`deleted_at`, every detail cleared) so its id is never answered or attributed again. Sessions
// record the profile a request named (null: none). Same column conventions as 001.
export const userProfiles: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("user_profiles")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("access_type", "text", (c) => c.notNull())
      .addColumn("name", "text")
      // The list's `order_by=name` key: ASCII-lowercased name, "" when unnamed (`unnamed` = 1 sorts last).
      .addColumn("name_key", "text", (c) => c.notNull())
      .addColumn("unnamed", "integer", (c) => c.notNull())
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("details_json", "text", (c) => c.notNull())
      // Recorded only: Google data controls as last set (null: never set).
      .addColumn("data_controls_json", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("deleted_at", "bigint")
      .execute();
    await db.schema
      .createIndex("user_profiles_listing")
      .on("user_profiles")
      .columns(["workspace_id", "id"])
      .execute();
    await db.schema
      .createIndex("user_profiles_by_name")
      .on("user_profiles")
      .columns(["workspace_id", "unnamed", "name_key", "id"])
      .execute();
    await db.schema.alterTable("sessions").addColumn("user_profile_id", "text").execute();
    await db.schema
      .createIndex("sessions_user_profile")
      .on("sessions")
      .columns(["workspace_id", "user_profile_id"])
      .execute();
  },
};
