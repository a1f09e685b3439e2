import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Push-notification configs of tasks (a webhook per config, scoped to a workspace and a task) and
// their durable outbox. A config's `cursor_seq` is the last committed fact of its session already
// turned into outbox rows: rows and cursor move in one transaction, so every committed fact is
// delivered once it is committed, and after a restart. An outbox row is claimed by one deliverer
// at a time (`lease_owner`, `lease_until`). Same conventions as 001.
export const pushOutbox: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("push_configs")
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("task_id", "text", (c) => c.notNull())
      .addColumn("config_id", "text", (c) => c.notNull())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("thread_id", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("token", "text", (c) => c.notNull())
      .addColumn("auth_scheme", "text", (c) => c.notNull())
      .addColumn("auth_credentials", "text", (c) => c.notNull())
      .addColumn("wire_version", "text", (c) => c.notNull())
      .addColumn("cursor_seq", "bigint", (c) => c.notNull())
      .addColumn("finished", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("push_configs_pk", ["workspace_id", "task_id", "config_id"])
      .execute();
    await db.schema
      .createIndex("push_configs_following")
      .on("push_configs")
      .columns(["finished", "created_at"])
      .execute();
    await db.schema
      .createTable("push_outbox")
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("task_id", "text", (c) => c.notNull())
      .addColumn("config_id", "text", (c) => c.notNull())
      .addColumn("position", "bigint", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addColumn("content_type", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("attempts", "integer", (c) => c.notNull())
      .addColumn("next_attempt_at", "bigint", (c) => c.notNull())
      .addColumn("lease_owner", "text")
      .addColumn("lease_until", "bigint")
      .addColumn("last_error", "text")
      .addColumn("settled_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("push_outbox_pk", ["workspace_id", "task_id", "config_id", "position"])
      .execute();
    await db.schema
      .createIndex("push_outbox_due")
      .on("push_outbox")
      .columns(["state", "next_attempt_at"])
      .execute();
  },
};
