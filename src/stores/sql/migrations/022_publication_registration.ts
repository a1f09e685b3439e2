import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";

// Durable registration: when each publication landed in the Coordinator's catalog (null: not yet),
// and why the Coordinator refused it for good (a conflicting fingerprint; never retried). Rows
// from before were registered synchronously by the all-in-one server, so they count as registered.
export const publicationRegistration: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("agent_publications").addColumn("registered_at", "bigint").execute();
    await db.schema.alterTable("agent_publications").addColumn("registration_error", "text").execute();
    await sql`update agent_publications set registered_at = created_at`.execute(db);
    // Partial: the reconciler's "unregistered, oldest first" reads only the rows still pending.
    await db.schema
      .createIndex("agent_publications_unregistered")
      .on("agent_publications")
      .column("created_at")
      .where(sql.ref("registered_at"), "is", null)
      .where(sql.ref("registration_error"), "is", null)
      .execute();
  },
};
