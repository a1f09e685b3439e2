import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Webhook endpoints of a workspace and the session cursors their events follow. Webhook deliveries
// are rows of the push outbox (013), which becomes the one outbox of both formats: `format` says
// which ("a2a" for push notifications, "webhook" for signed events), `delivery_id` is a webhook
// row's stable id (its `webhook-id` on every attempt and redelivery; null on A2A rows, whose id
// follows from their key) and `event_type` the event it carries, for listing. A webhook row's
// `task_id` is its stream (a session id, or the event id of a one-off event) and `config_id` its
// endpoint. An endpoint's signing secret is sealed under the master key like a push token.
export const webhooks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable("push_outbox")
      .addColumn("format", "text", (c) => c.notNull().defaultTo("a2a"))
      .execute();
    await db.schema.alterTable("push_outbox").addColumn("delivery_id", "text").execute();
    await db.schema.alterTable("push_outbox").addColumn("event_type", "text").execute();
    await db.schema
      .createIndex("push_outbox_by_endpoint")
      .on("push_outbox")
      .columns(["workspace_id", "config_id", "format", "created_at"])
      .execute();
    await db.schema
      .createIndex("push_outbox_delivery_id")
      .on("push_outbox")
      .columns(["delivery_id"])
      .execute();

    await db.schema
      .createTable("webhook_endpoints")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("enabled_events_json", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("disabled_reason", "text", (c) => c.notNull())
      .addColumn("secret_sealed", "text", (c) => c.notNull())
      .addColumn("secret_revision", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("webhook_endpoints_listing")
      .on("webhook_endpoints")
      .columns(["workspace_id", "created_at"])
      .execute();

    // One row per session whose committed facts webhook events follow: the last fact turned into
    // outbox rows, moved in the transaction that appends them (as a push config's cursor);
    // `created_at` is the session's.
    await db.schema
      .createTable("webhook_session_cursors")
      .addColumn("session_id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("thread_id", "text", (c) => c.notNull())
      .addColumn("cursor_seq", "bigint", (c) => c.notNull())
      .addColumn("finished", "integer", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    // A round looks for unfollowed sessions from just before the newest followed one.
    await db.schema
      .createIndex("webhook_session_cursors_newest")
      .on("webhook_session_cursors")
      .columns(["workspace_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("sessions_by_workspace_created")
      .on("sessions")
      .columns(["workspace_id", "created_at"])
      .execute();
    await db.schema
      .createIndex("webhook_session_cursors_following")
      .on("webhook_session_cursors")
      .columns(["finished", "created_at"])
      .execute();
  },
};
