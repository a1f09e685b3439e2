import { sql } from "kysely";
import type { ExecutableAgentSnapshot } from "../../coordinator/ports.js";
import type { HeldRun } from "../../resources/claimedResources.js";
import { type Db, fromJson } from "./db.js";
import { runAgentSql } from "./sessionHead.js";
import { rowToRecord } from "./sqlSessionResourceStore.js";
import type { SessionResourceTables } from "./tables/sessionResourceTables.js";

type SessionResourceRow = SessionResourceTables["session_resources"];

/**
 * Which session (and workspace) a run belongs to, for the worker transport's credential route: a
 * claim is only good for the session of its run, so a worker cannot present one run's claim to
 * open another session's credential. Read-only; deleted sessions have none.
 */
export class SqlRunSessions {
  constructor(private readonly db: Db) {}

  async sessionOf(runId: string): Promise<{ sessionId: string; workspaceId: string } | null> {
    const row = await this.db
      .selectFrom("runs")
      .innerJoin("sessions", "sessions.id", "runs.session_id")
      .select(["runs.session_id as sessionId", "sessions.workspace_id as workspaceId"])
      .where("runs.id", "=", runId)
      .where("sessions.deleted_at", "is", null)
      .executeTakeFirst();
    return row ?? null;
  }

  /**
   * A run's pinned agent with its roster (a child thread's own agent for a child's run), or null
   * when the run or its session is gone: what the run may spawn is derived from it.
   */
  async agentOf(runId: string): Promise<ExecutableAgentSnapshot | null> {
    const row = await this.db
      .selectFrom("runs as r")
      .innerJoin("sessions as s", "s.id", "r.session_id")
      .select(sql<string>`${sql.raw(runAgentSql("r.thread_id"))}`.as("agent"))
      .where("r.id", "=", runId)
      .where("s.deleted_at", "is", null)
      .executeTakeFirst();
    return row ? fromJson<ExecutableAgentSnapshot>(row.agent) : null;
  }

  /**
   * The run's session, workspace and the skills its pinned agent lists, while `owner` holds the
   * run at `epoch` with a lease unexpired at `now`: the resources' claim check in one read.
   */
  async heldRun(runId: string, owner: string, epoch: number, now: number): Promise<HeldRun | null> {
    // One row per resource of the session (one row with no resource when it has none).
    const rows = await this.db
      .selectFrom("runs as r")
      .innerJoin("sessions as s", "s.id", "r.session_id")
      .leftJoin("session_resources as sr", (join) =>
        join.onRef("sr.session_id", "=", "s.id").onRef("sr.workspace_id", "=", "s.workspace_id"),
      )
      .selectAll("sr")
      .select([
        "r.session_id as run_session_id",
        "s.workspace_id as run_workspace_id",
        sql<string>`${sql.raw(runAgentSql("r.thread_id"))}`.as("agent"),
      ])
      .where("r.id", "=", runId)
      .where("r.owner", "=", owner)
      .where("r.epoch", "=", epoch)
      .where(sql<string>`r.state`, "=", sql.lit("claimed"))
      .where("r.lease_expires_at", ">", now)
      .where("s.deleted_at", "is", null)
      .orderBy("sr.id")
      .execute();
    const first = rows[0];
    if (!first) return null;
    const agent = fromJson<ExecutableAgentSnapshot>(first.agent);
    return {
      sessionId: first.run_session_id,
      workspaceId: first.run_workspace_id,
      skills: agent.definition.skills ?? [],
      resources: rows.flatMap((row) => (row.id === null ? [] : [rowToRecord(row as SessionResourceRow)])),
    };
  }
}
