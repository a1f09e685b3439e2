import { sql } from "kysely";
import type {
  HeldClaim,
  HeldWork,
  SelfHostedPoller,
  WorkerRosterStore,
} from "../../coordinator/workerRoster.js";
import type { Db } from "./db.js";

/** The worker roster's reads, dialect-neutral: claims and pollers of one workspace only. */
export class SqlWorkerRoster implements WorkerRosterStore {
  constructor(private readonly db: Db) {}

  async heldClaims(workspaceId: string, limit: number): Promise<HeldClaim[]> {
    const rows = await this.db
      .selectFrom("runs")
      .innerJoin("sessions", "sessions.id", "runs.session_id")
      .select([
        "runs.id as runId",
        "runs.session_id as sessionId",
        "runs.owner as owner",
        "runs.epoch as epoch",
        "runs.lease_expires_at as leaseExpiresAt",
        "runs.updated_at as renewedAt",
      ])
      .where("sessions.workspace_id", "=", workspaceId)
      .where("sessions.deleted_at", "is", null)
      // A literal, so a prepared plan can use the partial index of claimable runs.
      .where(sql`runs.state`, "=", sql.lit("claimed"))
      .where("runs.owner", "is not", null)
      .orderBy("runs.updated_at", "desc")
      .orderBy("runs.id", "desc")
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      runId: r.runId,
      sessionId: r.sessionId,
      owner: r.owner ?? "",
      epoch: Number(r.epoch),
      leaseExpiresAt: r.leaseExpiresAt === null ? null : Number(r.leaseExpiresAt),
      renewedAt: Number(r.renewedAt),
    }));
  }

  async pollers(workspaceId: string, limit: number): Promise<SelfHostedPoller[]> {
    const rows = await this.db
      .selectFrom("work_pollers")
      .innerJoin("environments", "environments.id", "work_pollers.environment_id")
      .select([
        "work_pollers.environment_id as environmentId",
        "work_pollers.worker_id as workerId",
        "work_pollers.last_polled_at as lastPolledAt",
      ])
      .where("environments.workspace_id", "=", workspaceId)
      .orderBy("work_pollers.last_polled_at", "desc")
      .orderBy("work_pollers.worker_id")
      .limit(limit)
      .execute();
    if (rows.length === 0) return [];
    const held = await this.db
      .selectFrom("work_items")
      .select(["id", "environment_id", "session_id", "owner", "state", "lease_expires_at"])
      .where("workspace_id", "=", workspaceId)
      .where("state", "in", ["starting", "active", "stopping"])
      .where("owner", "is not", null)
      .orderBy("id")
      .limit(limit)
      .execute();
    const byWorker = new Map<string, HeldWork[]>();
    for (const w of held) {
      const key = `${w.environment_id}\n${w.owner}`;
      const list = byWorker.get(key) ?? [];
      list.push({
        workId: w.id,
        sessionId: w.session_id,
        state: w.state,
        leaseExpiresAt: w.lease_expires_at === null ? null : Number(w.lease_expires_at),
      });
      byWorker.set(key, list);
    }
    return rows.map((r) => ({
      environmentId: r.environmentId,
      workerId: r.workerId,
      lastPolledAt: Number(r.lastPolledAt),
      work: byWorker.get(`${r.environmentId}\n${r.workerId}`) ?? [],
    }));
  }
}
