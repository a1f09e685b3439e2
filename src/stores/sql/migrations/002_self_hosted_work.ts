import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";

// Self-hosted environments (wire §2.8, §4): environment keys, the work queue with its leases, the
// sessions tokens bound to one delivery of a work item, and the workers seen polling. Same column
// conventions as 001: `bigint` milliseconds and counters, `text` ids and JSON.
export const selfHostedWork: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("environment_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("name", "text")
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("key_hint", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("revoked_at", "bigint")
      .execute();
    await db.schema
      .createIndex("environment_keys_by_environment")
      .on("environment_keys")
      .columns(["environment_id", "id"])
      .execute();

    await db.schema
      .createTable("work_items")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("owner", "text")
      .addColumn("epoch", "bigint", (c) => c.notNull())
      .addColumn("polled_at", "bigint")
      .addColumn("acknowledged_at", "bigint")
      .addColumn("started_at", "bigint")
      .addColumn("last_heartbeat_at", "bigint")
      .addColumn("lease_expires_at", "bigint")
      .addColumn("ttl_seconds", "bigint", (c) => c.notNull())
      .addColumn("stop_requested_at", "bigint")
      .addColumn("stopped_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("work_items_by_environment")
      .on("work_items")
      .columns(["environment_id", "state", "created_at"])
      .execute();
    await db.schema
      .createIndex("work_items_listing")
      .on("work_items")
      .columns(["environment_id", "id"])
      .execute();
    // At most one live (not stopped) item per session: a dormant session's input queues a new item
    // only once, however many inputs race (both backends support partial unique indexes).
    await db.schema
      .createIndex("work_items_one_live_per_session")
      .on("work_items")
      .column("session_id")
      .unique()
      .where(sql.ref("state"), "<>", "stopped")
      .execute();

    await db.schema
      .createTable("work_tokens")
      .addColumn("token_hash", "text", (c) => c.primaryKey())
      .addColumn("work_id", "text", (c) => c.notNull())
      .addColumn("epoch", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();

    await db.schema
      .createTable("work_pollers")
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("worker_id", "text", (c) => c.notNull())
      .addColumn("last_polled_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("work_pollers_pk", ["environment_id", "worker_id"])
      .execute();
  },
};
