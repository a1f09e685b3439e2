import type { SessionReach, WorkspaceThreads } from "../../coordinator/sessionChangeFeed.js";
import type { Db } from "./db.js";
import { boundUnder } from "./sessionNamePrefix.js";

/** Which threads belong to sessions within a reach (the session change feed filters commits with it). */
export class SqlWorkspaceThreads implements WorkspaceThreads {
  constructor(private readonly db: Db) {}

  async threadsOf(reach: SessionReach, threadIds: readonly string[]): Promise<ReadonlySet<string>> {
    if (threadIds.length === 0 || reach.agentIds?.length === 0) return new Set();
    let query = this.db
      .selectFrom("threads")
      .innerJoin("sessions as s", "s.id", "threads.session_id")
      .select("threads.id as id")
      .where("s.workspace_id", "=", reach.workspaceId)
      .where("threads.id", "in", [...threadIds]);
    if (reach.agentIds !== null) query = query.where("s.agent_id", "in", [...reach.agentIds]);
    if (reach.sessionId !== null) query = query.where("s.id", "=", reach.sessionId);
    const namePrefix = reach.namePrefix ?? null;
    if (namePrefix !== null) query = query.where(boundUnder(namePrefix));
    const rows = await query.execute();
    return new Set(rows.map((r) => r.id));
  }
}
