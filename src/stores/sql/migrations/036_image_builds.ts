import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Container image builds (coordinator/imageBuilds): one durable demand per (base image, frozen
// resolution, recipe) with its state, its lease (owner, epoch, expiry) and, once ready, the
// immutable registry digest; and which build each environment revision runs.
export const imageBuilds: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("image_builds")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("base_image", "text", (c) => c.notNull())
      .addColumn("resolution_id", "text", (c) => c.notNull())
      .addColumn("recipe_digest", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("owner", "text")
      .addColumn("epoch", "integer", (c) => c.notNull())
      .addColumn("lease_expires_at", "bigint")
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("digest", "text")
      .addColumn("image_reference", "text")
      .addColumn("error", "text")
      .addColumn("log_tail", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    // Claims scan waiting builds oldest first.
    await db.schema
      .createIndex("image_builds_claim")
      .on("image_builds")
      .columns(["state", "created_at"])
      .execute();

    await db.schema
      .createTable("environment_image_builds")
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("revision", "integer", (c) => c.notNull())
      .addColumn("build_id", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("environment_image_builds_pk", ["environment_id", "revision"])
      .execute();
  },
};
