import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Deployments (deployments/) and their append-only runs. A scheduled instant's identity is
// (deployment_id, scheduled_at), a unique key: a second replica's claim of the same instant
// inserts nothing. Same column conventions as 001.
export const deployments: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("deployments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("agent_version", "bigint", (c) => c.notNull())
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("initial_events_json", "text", (c) => c.notNull())
      .addColumn("resources_json", "text", (c) => c.notNull())
      .addColumn("vault_ids_json", "text", (c) => c.notNull())
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("budget_json", "text")
      .addColumn("schedule_expression", "text")
      .addColumn("schedule_timezone", "text")
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("paused_reason_json", "text")
      .addColumn("next_run_at", "bigint")
      .addColumn("last_run_at", "bigint")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .execute();
    await db.schema
      .createIndex("deployments_listing")
      .on("deployments")
      .columns(["workspace_id", "created_at", "id"])
      .execute();
    // The scheduler's scan: what is due, across workspaces.
    await db.schema.createIndex("deployments_due").on("deployments").columns(["next_run_at"]).execute();

    await db.schema
      .createTable("deployment_runs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("deployment_id", "text", (c) => c.notNull())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("agent_version", "bigint", (c) => c.notNull())
      .addColumn("trigger_type", "text", (c) => c.notNull())
      .addColumn("scheduled_at", "bigint")
      .addColumn("session_id", "text")
      .addColumn("error_type", "text")
      .addColumn("error_message", "text")
      .addColumn("claimed_at", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint")
      .execute();
    // One run per scheduled instant (manual runs have none, and NULLs never collide).
    await db.schema
      .createIndex("deployment_runs_one_per_instant")
      .on("deployment_runs")
      .columns(["deployment_id", "scheduled_at"])
      .unique()
      .execute();
    await db.schema
      .createIndex("deployment_runs_listing")
      .on("deployment_runs")
      .columns(["workspace_id", "created_at", "id"])
      .execute();
    // A session's deployment (the session DTO's `deployment_id`, the sessions list's filter).
    await db.schema
      .createIndex("deployment_runs_by_session")
      .on("deployment_runs")
      .columns(["session_id"])
      .execute();
    await db.schema
      .createIndex("deployment_runs_unsettled")
      .on("deployment_runs")
      .columns(["created_at", "claimed_at"])
      .execute();
  },
};
