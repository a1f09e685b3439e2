import { type RawBuilder, sql } from "kysely";
import type { DbOrTx } from "./db.js";
import type { Database } from "./schema.js";

/**
 * A thread's head: its newest commit's version and the session projection after it. A thread
 * with no commit yet has none (version 0, the session row's initial projection).
 */
export interface Head {
  version: number;
  status: string;
  pending_json: string;
  usage_json: string;
}

/** The head of `threadId`, or null before its first commit. */
export async function readHead(db: DbOrTx, threadId: string): Promise<Head | null> {
  const row = await db
    .selectFrom("commits")
    .select(["version", "status", "pending_json", "usage_json"])
    .where("thread_id", "=", threadId)
    .orderBy("base_version", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? headFrom(row) : null;
}

/** A head row as read; the projection columns are set on every head a commit wrote. */
export function headFrom(row: {
  version: number | string;
  status: string | null;
  pending_json: string | null;
  usage_json: string | null;
}): Head {
  return {
    version: Number(row.version),
    status: row.status ?? "idle",
    pending_json: row.pending_json ?? "[]",
    usage_json: row.usage_json ?? "{}",
  };
}

/**
 * The agent snapshot of a session row `s`: its own when it differs from the catalog's (an
 * override), else the executable catalog's for its agent and version (immutable once registered).
 */
export const SESSION_AGENT_SQL =
  "coalesce(nullif(s.agent_snapshot_json, ''), (select ea.snapshot_json from executable_agents ea where ea.workspace_id = s.workspace_id and ea.agent_id = s.agent_id and ea.version = s.agent_version))";

/**
 * The agent a run on thread `threadIdSql` runs, with its session row `s`: a child thread's own
 * pinned snapshot (frozen when it was spawned), else the session's agent (a primary thread has none
 * of its own). Every claim path reads this, so a child runs its own agent version.
 */
export function runAgentSql(threadIdSql: string): string {
  return `coalesce((select t.agent_snapshot_json from threads t where t.id = ${threadIdSql}), ${SESSION_AGENT_SQL})`;
}

/** The session's current status in `selectSessions`: its head's, or the initial one before its first commit. */
export const sessionStatus: RawBuilder<string> = sql<string>`coalesce(h.status, s.status)`;

/**
 * Sessions (`sessions as s`) with their current projection, as `rowToSession` reads them: the
 * projection columns come from the thread's head, `updated_at` is the later of the row's own and
 * the head's commit, and `thread_version` is the head's version.
 */
export function selectSessions(db: DbOrTx) {
  return (
    db
      .selectFrom("sessions as s")
      // The head by its key: one index lookup for the newest version, then one row, instead of a
      // correlated lookup per projection column.
      .leftJoin("commits as h", (join) =>
        join
          .onRef("h.thread_id", "=", "s.thread_id")
          .on(
            "h.base_version",
            "=",
            sql<number>`(select max(m.base_version) from commits m where m.thread_id = s.thread_id)`,
          ),
      )
      .select([
        "s.id",
        "s.workspace_id",
        "s.agent_id",
        "s.agent_version",
        sql<string>`${sql.raw(SESSION_AGENT_SQL)}`.as("agent_snapshot_json"),
        "s.environment_id",
        "s.environment_revision",
        "s.thread_id",
        "s.title",
        "s.metadata_json",
        "s.resources_json",
        "s.vault_ids_json",
        "s.credential_pins_json",
        "s.budget_json",
        "s.created_at",
        "s.archived_at",
        "s.deleted_at",
        "s.data_subject",
        "s.user_profile_id",
        sessionStatus.as("status"),
        sql<string>`coalesce(h.pending_json, s.pending_json)`.as("pending_json"),
        sql<string>`coalesce(h.usage_json, s.usage_json)`.as("usage_json"),
        sql<number>`coalesce(h.created_at, 0)`.as("head_at"),
        sql<number>`coalesce(h.version, 0)`.as("thread_version"),
        "s.updated_at as row_updated_at",
      ])
  );
}

/** A row of `selectSessions` as the sessions row `rowToSession` reads. */
export function sessionRowOf(row: {
  row_updated_at: number | string;
  head_at: number | string;
  [column: string]: unknown;
}): Database["sessions"] {
  const { row_updated_at, head_at, thread_version: _, ...rest } = row;
  return {
    ...(rest as Omit<Database["sessions"], "updated_at">),
    updated_at: Math.max(Number(row_updated_at), Number(head_at)),
  };
}
