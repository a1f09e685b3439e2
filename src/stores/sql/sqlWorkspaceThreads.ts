import type { WorkspaceThreads } from "../../coordinator/sessionChangeFeed.js";
import type { Db } from "./db.js";

/** Which threads belong to a workspace's sessions (the session change feed filters commits with it). */
export class SqlWorkspaceThreads implements WorkspaceThreads {
  constructor(private readonly db: Db) {}

  async threadsOf(workspaceId: string, threadIds: readonly string[]): Promise<ReadonlySet<string>> {
    if (threadIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom("threads")
      .innerJoin("sessions", "sessions.id", "threads.session_id")
      .select("threads.id as id")
      .where("sessions.workspace_id", "=", workspaceId)
      .where("threads.id", "in", [...threadIds])
      .execute();
    return new Set(rows.map((r) => r.id));
  }
}
