import type { Db } from "./db.js";

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
}
