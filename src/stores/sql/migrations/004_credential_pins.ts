import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";

// Credential pinning and the open audit. A session's pins are part
// of its baseline, frozen at creation next to the agent snapshot: ids, revisions, usage and holder
// policy, never material. Every open (or refusal) by a last-mile holder is one audit row, without the
// secret. Same column conventions as 001: `bigint` milliseconds and counters, `text` ids and JSON.
export const credentialPins: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable("sessions")
      .addColumn("credential_pins_json", "text", (c) => c.notNull().defaultTo(sql.lit("[]")))
      .execute();

    await db.schema
      .createTable("credential_opens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("run_id", "text", (c) => c.notNull())
      /** Who asked: the worker identity holding the run's claim, and the claim's epoch. */
      .addColumn("owner", "text", (c) => c.notNull())
      .addColumn("epoch", "bigint", (c) => c.notNull())
      .addColumn("vault_id", "text", (c) => c.notNull())
      .addColumn("credential_id", "text", (c) => c.notNull())
      .addColumn("revision", "bigint", (c) => c.notNull())
      .addColumn("usage_key", "text", (c) => c.notNull())
      .addColumn("holder", "text", (c) => c.notNull())
      /** `opened`, `refreshed`, or `refused` with the admission's reason (never material). */
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("reason", "text")
      /** For `refreshed`: the revision the holder's `mcp_oauth` refresh committed (its lineage). */
      .addColumn("refreshed_to", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("credential_opens_by_session")
      .on("credential_opens")
      .columns(["session_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("credential_opens_by_credential")
      .on("credential_opens")
      .columns(["credential_id", "created_at"])
      .execute();
  },
};
