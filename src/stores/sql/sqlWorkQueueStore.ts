import type {
  ListQuery,
  Page,
  SessionsTokenBinding,
  WorkQueueStats,
  WorkQueueStore,
} from "../../coordinator/ports.js";
import {
  DEFAULT_RECLAIM_MS,
  deliver,
  deliverable,
  WORKERS_POLLING_WINDOW_MS,
  type WorkChange,
  type WorkItemRecord,
  type WorkState,
} from "../../coordinator/workLease.js";
import {
  begin,
  type Db,
  type DbOrTx,
  decodeCursor,
  encodeCursor,
  fromJson,
  type SqlDialect,
  toJson,
} from "./db.js";
import type { Database } from "./schema.js";

type Row = Database["work_items"];

/**
 * The self-hosted work queue in dialect-neutral Kysely, with the pure decisions of
 * `coordinator/workLease.ts`. SQLite serialises writers, so a read-decide-write transaction needs
 * nothing more. On PostgreSQL the row a decision reads is locked first: a poll takes its candidate
 * `FOR UPDATE SKIP LOCKED` (concurrent polls deliver different items and never wait), and
 * ack/heartbeat/stop/update lock the item `FOR UPDATE`. These transactions lock only work item
 * rows, so they cannot deadlock with the input ledger, which locks thread → work item → run.
 */
export class SqlWorkQueueStore implements WorkQueueStore {
  private readonly rowLocks: boolean;

  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect = "sqlite",
  ) {
    this.rowLocks = dialect === "postgres";
  }

  async enqueue(item: WorkItemRecord, now: number): Promise<WorkItemRecord | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      // A `stopping` item whose worker vanished has stopped (`effectiveWork`); write that down so
      // the one-live-item index lets the session queue a new one.
      await tx
        .updateTable("work_items")
        .set((eb) => ({ state: "stopped", stopped_at: eb.ref("lease_expires_at"), lease_expires_at: null }))
        .where("session_id", "=", item.sessionId)
        .where("state", "=", "stopping")
        .where("lease_expires_at", "<=", now)
        .execute();
      const result = await tx
        .insertInto("work_items")
        .values(toRow(item))
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1 ? item : null;
    });
  }

  async poll(
    environmentId: string,
    workerId: string | null,
    reclaimOlderThanMs: number,
    tokenHash: string,
    now: number,
  ): Promise<WorkItemRecord | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const row = await tx
        .selectFrom("work_items")
        .selectAll()
        .where("environment_id", "=", environmentId)
        .where((eb) =>
          eb.or([
            eb.and([
              eb("state", "=", "queued"),
              eb.or([eb("polled_at", "is", null), eb("polled_at", "<=", now - reclaimOlderThanMs)]),
            ]),
            eb.and([eb("state", "in", ["starting", "active"]), eb("lease_expires_at", "<=", now)]),
          ]),
        )
        .orderBy("created_at", "asc")
        .orderBy("id", "asc")
        .limit(1)
        .$if(this.rowLocks, (qb) => qb.forUpdate().skipLocked())
        .executeTakeFirst();
      if (!row) return null;
      const item = toRecord(row);
      if (!deliverable(item, now, reclaimOlderThanMs)) return null;
      const next = deliver(item, workerId, now);
      const written = await writeItem(tx, next, item.epoch);
      if (!written) return null;
      await tx
        .insertInto("work_tokens")
        .values({ token_hash: tokenHash, work_id: next.id, epoch: next.epoch, created_at: now })
        .execute();
      return next;
    });
  }

  async notePoller(environmentId: string, workerId: string, now: number): Promise<void> {
    await this.db
      .insertInto("work_pollers")
      .values({ environment_id: environmentId, worker_id: workerId, last_polled_at: now })
      .onConflict((oc) => oc.columns(["environment_id", "worker_id"]).doUpdateSet({ last_polled_at: now }))
      .execute();
  }

  async transition<T>(
    environmentId: string,
    workId: string,
    decide: (item: WorkItemRecord) => WorkChange<T>,
  ): Promise<T | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const row = await tx
        .selectFrom("work_items")
        .selectAll()
        .where("id", "=", workId)
        .where("environment_id", "=", environmentId)
        .$if(this.rowLocks, (qb) => qb.forUpdate())
        .executeTakeFirst();
      if (!row) return null;
      const item = toRecord(row);
      const change = decide(item);
      if (change.next) await writeItem(tx, change.next, item.epoch);
      return change.result;
    });
  }

  async get(environmentId: string, workId: string): Promise<WorkItemRecord | null> {
    const row = await this.db
      .selectFrom("work_items")
      .selectAll()
      .where("id", "=", workId)
      .where("environment_id", "=", environmentId)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async list(environmentId: string, q: ListQuery): Promise<Page<WorkItemRecord>> {
    const cursor = decodeCursor("work", q.cursor);
    let query = this.db.selectFrom("work_items").selectAll().where("environment_id", "=", environmentId);
    if (cursor && typeof cursor.id === "string") query = query.where("id", "<", cursor.id);
    const rows = await query
      .orderBy("id", "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(toRecord);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("work", { id: last.id }) : null,
    };
  }

  async stats(environmentId: string, reclaimOlderThanMs: number, now: number): Promise<WorkQueueStats> {
    const reclaimBefore = now - (reclaimOlderThanMs || DEFAULT_RECLAIM_MS);
    const row = await this.db
      .selectFrom("work_items")
      .where("environment_id", "=", environmentId)
      .select((eb) => [
        // Waiting: never delivered, pending past the reclaim window, or handed back by a lapsed lease.
        eb.fn
          .sum<number | string | null>(
            eb
              .case()
              .when(
                eb.or([
                  eb.and([
                    eb("state", "=", "queued"),
                    eb.or([eb("polled_at", "is", null), eb("polled_at", "<=", reclaimBefore)]),
                  ]),
                  eb.and([eb("state", "in", ["starting", "active"]), eb("lease_expires_at", "<=", now)]),
                ]),
              )
              .then(1)
              .else(0)
              .end(),
          )
          .as("depth"),
        eb.fn
          .sum<number | string | null>(
            eb
              .case()
              .when(eb.and([eb("state", "=", "queued"), eb("polled_at", ">", reclaimBefore)]))
              .then(1)
              .else(0)
              .end(),
          )
          .as("pending"),
        eb.fn
          .min<number | string | null>(
            eb
              .case()
              .when(
                eb.or([
                  eb("state", "=", "queued"),
                  eb.and([eb("state", "in", ["starting", "active"]), eb("lease_expires_at", "<=", now)]),
                ]),
              )
              .then(eb.ref("created_at"))
              .else(null)
              .end(),
          )
          .as("oldest"),
      ])
      .executeTakeFirst();
    const pollers = await this.db
      .selectFrom("work_pollers")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .where("environment_id", "=", environmentId)
      .where("last_polled_at", ">=", now - WORKERS_POLLING_WINDOW_MS)
      .executeTakeFirst();
    return {
      depth: Number(row?.depth ?? 0),
      pending: Number(row?.pending ?? 0),
      oldestQueuedAt: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
      workersPolling: Number(pollers?.n ?? 0),
    };
  }

  async findToken(tokenHash: string): Promise<SessionsTokenBinding | null> {
    const row = await this.db
      .selectFrom("work_tokens")
      .innerJoin("work_items", "work_items.id", "work_tokens.work_id")
      .selectAll("work_items")
      .select("work_tokens.epoch as token_epoch")
      .where("work_tokens.token_hash", "=", tokenHash)
      .executeTakeFirst();
    if (!row) return null;
    const item = toRecord(row);
    return {
      workId: item.id,
      epoch: Number(row.token_epoch),
      workspaceId: item.workspaceId,
      environmentId: item.environmentId,
      sessionId: item.sessionId,
      item,
    };
  }
}

/** Writes every mutable column of `next`, only if nobody re-delivered the item since it was read. */
async function writeItem(db: DbOrTx, next: WorkItemRecord, readEpoch: number): Promise<boolean> {
  const { id, workspace_id, environment_id, session_id, created_at, ...mutable } = toRow(next);
  const result = await db
    .updateTable("work_items")
    .set(mutable)
    .where("id", "=", id)
    .where("epoch", "=", readEpoch)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

function toRow(r: WorkItemRecord): Row {
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    environment_id: r.environmentId,
    session_id: r.sessionId,
    state: r.state,
    metadata_json: toJson(r.metadata),
    owner: r.owner,
    epoch: r.epoch,
    polled_at: r.polledAt,
    acknowledged_at: r.acknowledgedAt,
    started_at: r.startedAt,
    last_heartbeat_at: r.lastHeartbeatAt,
    lease_expires_at: r.leaseExpiresAt,
    ttl_seconds: r.ttlSeconds,
    stop_requested_at: r.stopRequestedAt,
    stopped_at: r.stoppedAt,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

const nullableNumber = (v: number | null): number | null => (v === null ? null : Number(v));

export function toRecord(r: Row): WorkItemRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    environmentId: r.environment_id,
    sessionId: r.session_id,
    state: r.state as WorkState,
    metadata: fromJson<Record<string, string>>(r.metadata_json),
    owner: r.owner,
    epoch: Number(r.epoch),
    polledAt: nullableNumber(r.polled_at),
    acknowledgedAt: nullableNumber(r.acknowledged_at),
    startedAt: nullableNumber(r.started_at),
    lastHeartbeatAt: nullableNumber(r.last_heartbeat_at),
    leaseExpiresAt: nullableNumber(r.lease_expires_at),
    ttlSeconds: Number(r.ttl_seconds),
    stopRequestedAt: nullableNumber(r.stop_requested_at),
    stoppedAt: nullableNumber(r.stopped_at),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}
