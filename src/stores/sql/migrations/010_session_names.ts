import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Names a workspace gives its sessions (a UI client's chat or thread id), and in a key space of its
// own the workspace's default environment. A row is first a reservation (`reservation` set, no
// `target_id`) taken by the one request that creates the target, then a binding to it. The primary
// key is what makes concurrent first uses of one name create one target. Same conventions as 001.
export const sessionNames: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("session_names")
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("space", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("target_id", "text")
      .addColumn("reservation", "text")
      .addColumn("reserved_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("session_names_pk", ["workspace_id", "space", "name"])
      .execute();
    // Deleting a session (or an environment) removes the names bound to it.
    await db.schema.createIndex("session_names_target").on("session_names").column("target_id").execute();
  },
};
