import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Frozen package resolutions: one per environment revision, written once (first writer wins) by the
// worker that first prepared the revision, read by every other. The id is a digest of the content.
export const packageResolutions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("environment_package_resolutions")
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("revision", "integer", (c) => c.notNull())
      .addColumn("resolution_id", "text", (c) => c.notNull())
      .addColumn("content_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("environment_package_resolutions_pk", ["environment_id", "revision"])
      .execute();
  },
};
