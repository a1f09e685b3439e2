import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Column types are chosen to mean the same on SQLite and PostgreSQL: `bigint` holds millisecond
// timestamps and counters, `text` holds ids and canonical JSON.
export const initial: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("workspaces")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("api_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("label", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("revoked_at", "bigint")
      .execute();

    await db.schema
      .createTable("agents")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("latest_version", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .execute();
    await db.schema.createIndex("agents_by_workspace").on("agents").columns(["workspace_id", "id"]).execute();
    await db.schema
      .createTable("agent_publications")
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("version", "bigint", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("definition_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("agent_publications_pk", ["agent_id", "version"])
      .execute();

    await db.schema
      .createTable("executable_agents")
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("version", "bigint", (c) => c.notNull())
      .addColumn("fingerprint", "text", (c) => c.notNull())
      .addColumn("snapshot_json", "text", (c) => c.notNull())
      .addColumn("registered_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("executable_agents_pk", ["workspace_id", "agent_id", "version"])
      .execute();

    await db.schema
      .createTable("environments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("description", "text")
      .addColumn("scope", "text")
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("config_type", "text", (c) => c.notNull())
      .addColumn("latest_revision", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .execute();
    await db.schema
      .createIndex("environments_by_workspace")
      .on("environments")
      .columns(["workspace_id", "id"])
      .execute();
    await db.schema
      .createTable("environment_revisions")
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("revision", "bigint", (c) => c.notNull())
      .addColumn("config_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("environment_revisions_pk", ["environment_id", "revision"])
      .execute();

    await db.schema
      .createTable("sessions")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("workspace_id", "text", (c) => c.notNull())
      .addColumn("agent_id", "text", (c) => c.notNull())
      .addColumn("agent_version", "bigint", (c) => c.notNull())
      .addColumn("agent_snapshot_json", "text", (c) => c.notNull())
      .addColumn("environment_id", "text", (c) => c.notNull())
      .addColumn("environment_revision", "bigint", (c) => c.notNull())
      .addColumn("thread_id", "text", (c) => c.notNull())
      .addColumn("title", "text")
      .addColumn("metadata_json", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("pending_json", "text", (c) => c.notNull())
      .addColumn("usage_json", "text", (c) => c.notNull())
      .addColumn("resources_json", "text", (c) => c.notNull())
      .addColumn("vault_ids_json", "text", (c) => c.notNull())
      .addColumn("budget_json", "text")
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .addColumn("archived_at", "bigint")
      .addColumn("deleted_at", "bigint")
      .execute();
    await db.schema
      .createIndex("sessions_by_workspace")
      .on("sessions")
      .columns(["workspace_id", "id"])
      .execute();

    await db.schema
      .createTable("threads")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("version", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("events")
      .addColumn("thread_id", "text", (c) => c.notNull())
      .addColumn("seq", "bigint", (c) => c.notNull())
      .addColumn("id", "text", (c) => c.notNull().unique())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("body_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("events_pk", ["thread_id", "seq"])
      .execute();

    await db.schema
      .createTable("runs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("session_id", "text", (c) => c.notNull())
      .addColumn("thread_id", "text", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("owner", "text")
      .addColumn("epoch", "bigint", (c) => c.notNull())
      .addColumn("lease_expires_at", "bigint")
      .addColumn("available_at", "bigint", (c) => c.notNull())
      .addColumn("crash_count", "bigint", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .addColumn("updated_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("runs_claimable").on("runs").columns(["state", "available_at"]).execute();
    await db.schema.createIndex("runs_lapsed").on("runs").columns(["state", "lease_expires_at"]).execute();
    await db.schema.createIndex("runs_by_session").on("runs").columns(["session_id", "state"]).execute();

    await db.schema
      .createTable("commit_operations")
      .addColumn("op_id", "text", (c) => c.primaryKey())
      .addColumn("run_id", "text", (c) => c.notNull())
      .addColumn("payload_hash", "text", (c) => c.notNull())
      .addColumn("receipt_json", "text", (c) => c.notNull())
      .addColumn("committed_at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("send_receipts")
      .addColumn("session_id", "text", (c) => c.primaryKey())
      .addColumn("request_hash", "text", (c) => c.notNull())
      .addColumn("response_json", "text", (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
  },
};
