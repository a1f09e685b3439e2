import type { AdminAuditEntry } from "../../control/adminAudit.js";
import type {
  DeploymentListQuery,
  DeploymentRecord,
  DeploymentRunListQuery,
  DeploymentRunRecord,
  DeploymentStore,
  RunError,
  ScheduledClaim,
} from "../../deployments/ports.js";
import type { Page } from "../../kernel/pagination.js";
import { begin, type Db, decodeCursor, encodeCursor, type SqlDialect } from "./db.js";
import { deploymentRow, runRow, toDeployment, toRun } from "./deploymentRows.js";
import { writeAudit } from "./sqlAdminAudit.js";

/** Deployments and their append-only runs (deployments/), on either backend. */
export class SqlDeploymentStore implements DeploymentStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect,
  ) {}

  async create(record: DeploymentRecord, audit: AdminAuditEntry): Promise<void> {
    await begin(this.db, this.dialect).execute(async (tx) => {
      await tx.insertInto("deployments").values(deploymentRow(record)).execute();
      await writeAudit(tx, audit);
    });
  }

  async get(workspaceId: string, id: string): Promise<DeploymentRecord | null> {
    const row = await this.db
      .selectFrom("deployments")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toDeployment(row) : null;
  }

  async update(record: DeploymentRecord, audit: AdminAuditEntry): Promise<boolean> {
    const { id, workspace_id, created_at, last_run_at, ...changes } = deploymentRow(record);
    return begin(this.db, this.dialect).execute(async (tx) => {
      const result = await tx
        .updateTable("deployments")
        .set(changes)
        .where("workspace_id", "=", workspace_id)
        .where("id", "=", id)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, audit);
      return true;
    });
  }

  async list(workspaceId: string, q: DeploymentListQuery): Promise<Page<DeploymentRecord>> {
    const cursor = decodeCursor("deployments", q.cursor);
    let query = this.db.selectFrom("deployments").selectAll().where("workspace_id", "=", workspaceId);
    if (!q.includeArchived) query = query.where("archived_at", "is", null);
    if (q.status) query = query.where("status", "=", q.status);
    if (q.agentId) query = query.where("agent_id", "=", q.agentId);
    if (q.agentIds) {
      if (q.agentIds.length === 0) return { data: [], nextCursor: null };
      query = query.where("agent_id", "in", [...q.agentIds]);
    }
    if (q.createdAtGte !== null) query = query.where("created_at", ">=", q.createdAtGte);
    if (q.createdAtLte !== null) query = query.where("created_at", "<=", q.createdAtLte);
    if (cursor && typeof cursor.at === "number" && typeof cursor.id === "string") {
      const { at, id } = cursor;
      query = query.where((eb) =>
        eb.or([eb("created_at", "<", at), eb.and([eb("created_at", "=", at), eb("id", "<", id)])]),
      );
    }
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    return pageOf(rows.map(toDeployment), q.limit, "deployments");
  }

  async due(at: number, limit: number): Promise<DeploymentRecord[]> {
    const rows = await this.db
      .selectFrom("deployments")
      .selectAll()
      .where("next_run_at", "<=", at)
      .where("status", "=", "active")
      .where("archived_at", "is", null)
      .orderBy("next_run_at")
      .limit(limit)
      .execute();
    return rows.map(toDeployment);
  }

  async claimScheduled(claim: ScheduledClaim): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      // Compare-and-set: on PostgreSQL a concurrent claimer waits on this row, then finds it moved.
      const moved = await tx
        .updateTable("deployments")
        .set({ next_run_at: claim.nextRunAt })
        .where("id", "=", claim.deploymentId)
        .where("next_run_at", "=", claim.expectedNextRunAt)
        .where("status", "=", "active")
        .where("archived_at", "is", null)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      // The instant's unique key: a run already recorded for it (an author's write put an older
      // next instant back) inserts nothing, and the next instant still moves on.
      const inserted = await tx
        .insertInto("deployment_runs")
        .values(runRow(claim.run))
        .onConflict((oc) => oc.columns(["deployment_id", "scheduled_at"]).doNothing())
        .executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
    });
  }

  async insertRun(run: DeploymentRunRecord): Promise<void> {
    await this.db.insertInto("deployment_runs").values(runRow(run)).execute();
  }

  async settleRun(
    workspaceId: string,
    runId: string,
    outcome: { sessionId: string } | { error: RunError },
    now: number,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const result = await tx
        .updateTable("deployment_runs")
        .set(
          "sessionId" in outcome
            ? { session_id: outcome.sessionId, created_at: now }
            : { error_type: outcome.error.type, error_message: outcome.error.message, created_at: now },
        )
        .where("workspace_id", "=", workspaceId)
        .where("id", "=", runId)
        .where("created_at", "is", null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      if ("sessionId" in outcome) {
        const run = await tx
          .selectFrom("deployment_runs")
          .select(["deployment_id", "trigger_type"])
          .where("id", "=", runId)
          .executeTakeFirstOrThrow();
        // SDK `last_run_at`: the latest scheduled run that started; manual runs do not move it.
        if (run.trigger_type === "schedule")
          await tx
            .updateTable("deployments")
            .set({ last_run_at: now })
            .where("id", "=", run.deployment_id)
            .where((eb) => eb.or([eb("last_run_at", "is", null), eb("last_run_at", "<", now)]))
            .execute();
      }
      return true;
    });
  }

  async getRun(workspaceId: string, id: string): Promise<DeploymentRunRecord | null> {
    const row = await this.db
      .selectFrom("deployment_runs")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toRun(row) : null;
  }

  async listRuns(workspaceId: string, q: DeploymentRunListQuery): Promise<Page<DeploymentRunRecord>> {
    const cursor = decodeCursor("deployment_runs", q.cursor);
    let query = this.db
      .selectFrom("deployment_runs")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("created_at", "is not", null);
    if (q.deploymentId) query = query.where("deployment_id", "=", q.deploymentId);
    if (q.agentIds) {
      if (q.agentIds.length === 0) return { data: [], nextCursor: null };
      query = query.where("agent_id", "in", [...q.agentIds]);
    }
    if (q.triggerType) query = query.where("trigger_type", "=", q.triggerType);
    if (q.hasError === true) query = query.where("error_type", "is not", null);
    if (q.hasError === false) query = query.where("session_id", "is not", null);
    const { gt, gte, lt, lte } = q.createdAt;
    if (gt !== undefined) query = query.where("created_at", ">", gt);
    if (gte !== undefined) query = query.where("created_at", ">=", gte);
    if (lt !== undefined) query = query.where("created_at", "<", lt);
    if (lte !== undefined) query = query.where("created_at", "<=", lte);
    if (cursor && typeof cursor.at === "number" && typeof cursor.id === "string") {
      const { at, id } = cursor;
      query = query.where((eb) =>
        eb.or([eb("created_at", "<", at), eb.and([eb("created_at", "=", at), eb("id", "<", id)])]),
      );
    }
    const rows = await query
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    return pageOf(rows.map(toRun), q.limit, "deployment_runs");
  }

  async unsettled(before: number, limit: number): Promise<DeploymentRunRecord[]> {
    const rows = await this.db
      .selectFrom("deployment_runs")
      .selectAll()
      .where("created_at", "is", null)
      .where("claimed_at", "<", before)
      .orderBy("claimed_at")
      .limit(limit)
      .execute();
    return rows.map(toRun);
  }

  async deploymentsOfSessions(
    workspaceId: string,
    sessionIds: readonly string[],
  ): Promise<Map<string, string>> {
    if (sessionIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("deployment_runs")
      .select(["session_id", "deployment_id"])
      .where("workspace_id", "=", workspaceId)
      .where("session_id", "in", [...sessionIds])
      .execute();
    return new Map(rows.flatMap((r) => (r.session_id ? [[r.session_id, r.deployment_id] as const] : [])));
  }

  async scheduledClaimsSince(workspaceId: string, since: number): Promise<number> {
    const row = await this.db
      .selectFrom("deployment_runs")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("workspace_id", "=", workspaceId)
      .where("trigger_type", "=", "schedule")
      .where("claimed_at", ">=", since)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }
}

/** Pages newest first by (created_at, id). */
function pageOf<T extends { id: string; createdAt: number | null }>(
  rows: T[],
  limit: number,
  list: string,
): Page<T> {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return {
    data,
    nextCursor:
      rows.length > limit && last ? encodeCursor(list, { at: last.createdAt ?? 0, id: last.id }) : null,
  };
}
