import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// A session's child threads: the thread that spawned one, the callable agent it runs (its name and
// its snapshot; null on a primary thread, which runs the session's agent) and when it was archived
// (a primary thread is archived with its session, so it never sets its own). Same conventions as 001.
export const threadLineage: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("threads").addColumn("parent_thread_id", "text").execute();
    await db.schema.alterTable("threads").addColumn("agent_name", "text").execute();
    await db.schema.alterTable("threads").addColumn("agent_snapshot_json", "text").execute();
    await db.schema.alterTable("threads").addColumn("archived_at", "bigint").execute();
  },
};
