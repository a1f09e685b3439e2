import { type ExpressionBuilder, sql } from "kysely";
import {
  type ClaimedDelivery,
  firstPosition,
  type PushDelivery,
  type PushMessage,
  type PushOutboxStore,
  type PushSettlement,
  type PushSubscription,
} from "../../coordinator/pushOutbox.js";
import { begin, type Db, type DbOrTx, type SqlDialect } from "./db.js";
import type { Database } from "./schema.js";

type ConfigRow = Database["push_configs"];
type OutboxRow = Database["push_outbox"];
/** A query over the outbox aliased `o`. */
type OutboxScope = Database & { o: OutboxRow };

/**
 * Push configs and the one outbox (A2A push and webhook rows) in dialect-neutral Kysely. SQLite has one writer, so a claim's
 * read-then-lease transaction needs nothing more; on PostgreSQL the claim takes its rows `FOR
 * UPDATE SKIP LOCKED`, so replicas claiming at once lease different rows and never wait, and a
 * row already leased is not due. The cursor moves by compare-and-set, in the transaction that
 * appends the rows it covers.
 */
export class SqlPushOutboxStore implements PushOutboxStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect = "sqlite",
  ) {}

  async subscribe(s: PushSubscription, first: PushMessage | null, now: number): Promise<void> {
    await begin(this.db, this.dialect).execute(async (tx) => {
      const inserted = await tx
        .insertInto("push_configs")
        .values(toConfigRow(s))
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) {
        // A new config starts with its first row, just before the rows of the facts after its cursor.
        if (first) await insertRows(tx, s, [{ ...first, position: firstPosition(s.cursorSeq) }], now);
        return;
      }
      await tx
        .updateTable("push_configs")
        .set({
          url: s.url,
          token: s.token,
          auth_scheme: s.authScheme,
          auth_credentials: s.authCredentials,
          wire_version: s.wireVersion,
        })
        .where("workspace_id", "=", s.workspaceId)
        .where("task_id", "=", s.taskId)
        .where("config_id", "=", s.configId)
        .execute();
    });
  }

  async subscription(workspaceId: string, taskId: string, configId: string) {
    const row = await this.db
      .selectFrom("push_configs")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("task_id", "=", taskId)
      .where("config_id", "=", configId)
      .executeTakeFirst();
    return row ? toSubscription(row) : null;
  }

  async subscriptions(workspaceId: string, taskId: string) {
    const rows = await this.db
      .selectFrom("push_configs")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("task_id", "=", taskId)
      .orderBy("created_at", "asc")
      .orderBy("config_id", "asc")
      .execute();
    return rows.map(toSubscription);
  }

  async unsubscribe(workspaceId: string, taskId: string, configId: string): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const gone = await tx
        .deleteFrom("push_configs")
        .where("workspace_id", "=", workspaceId)
        .where("task_id", "=", taskId)
        .where("config_id", "=", configId)
        .executeTakeFirst();
      await tx
        .deleteFrom("push_outbox")
        .where("workspace_id", "=", workspaceId)
        .where("task_id", "=", taskId)
        .where("config_id", "=", configId)
        .where("state", "=", "pending")
        .execute();
      return Number(gone.numDeletedRows) > 0;
    });
  }

  async following(limit: number, after: PushSubscription | null) {
    const rows = await this.db
      .selectFrom("push_configs")
      .selectAll()
      .where("finished", "=", 0)
      .$if(after !== null, (qb) =>
        qb.where((eb) =>
          eb(
            eb.refTuple("created_at", "workspace_id", "task_id", "config_id"),
            ">",
            eb.tuple(
              after?.createdAt ?? 0,
              after?.workspaceId ?? "",
              after?.taskId ?? "",
              after?.configId ?? "",
            ),
          ),
        ),
      )
      .orderBy("created_at", "asc")
      .orderBy("workspace_id", "asc")
      .orderBy("task_id", "asc")
      .orderBy("config_id", "asc")
      .limit(limit)
      .execute();
    return rows.map(toSubscription);
  }

  async advance(
    from: PushSubscription,
    toSeq: number,
    finished: boolean,
    rows: Array<PushMessage & { position: number }>,
    now: number,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const moved = await tx
        .updateTable("push_configs")
        .set({ cursor_seq: toSeq, finished: finished ? 1 : 0 })
        .where("workspace_id", "=", from.workspaceId)
        .where("task_id", "=", from.taskId)
        .where("config_id", "=", from.configId)
        .where("cursor_seq", "=", from.cursorSeq)
        .where("finished", "=", 0)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await insertRows(tx, from, rows, now);
      return true;
    });
  }

  /**
   * One statement leases the due rows (the pusher asks every few hundred milliseconds, and almost
   * always finds nothing: it must cost no transaction then); only rows it leased read their config.
   */
  async claim(owner: string, now: number, leaseMs: number, limit: number): Promise<ClaimedDelivery[]> {
    const due = this.db
      .selectFrom("push_outbox as o")
      .select(["o.workspace_id", "o.task_id", "o.config_id", "o.position"])
      .where("o.state", "=", "pending")
      .where("o.next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("o.lease_until", "is", null), eb("o.lease_until", "<=", now)]))
      // Rows of one config go out in order: only its earliest undelivered row is due.
      .where(firstPendingOfItsConfig)
      .orderBy("o.next_attempt_at", "asc")
      .orderBy("o.position", "asc")
      .limit(limit)
      .$if(this.dialect === "postgres", (qb) => qb.forUpdate().skipLocked());
    const leased = await this.db
      .updateTable("push_outbox")
      .set((eb) => ({ lease_owner: owner, lease_until: now + leaseMs, attempts: eb("attempts", "+", 1) }))
      // Kysely types no tuple IN (subquery); both dialects run it as written.
      .where(sql<boolean>`(workspace_id, task_id, config_id, position) in (${due})`)
      .returningAll()
      .execute();
    leased.sort(
      (x, y) =>
        Number(x.next_attempt_at) - Number(y.next_attempt_at) || Number(x.position) - Number(y.position),
    );
    const claimed: ClaimedDelivery[] = [];
    for (const row of leased) {
      const target = row.format === "webhook" ? await this.endpointOf(row, now) : await this.configOf(row);
      if (!target) continue; // unsubscribed (or its endpoint deleted or disabled) since the lease
      claimed.push({ ...toDelivery(row), attempts: Number(row.attempts), ...target });
    }
    return claimed;
  }

  private async configOf(row: OutboxRow) {
    const config = await this.db
      .selectFrom("push_configs")
      .select(["url", "token", "auth_scheme", "auth_credentials"])
      .where("workspace_id", "=", row.workspace_id)
      .where("task_id", "=", row.task_id)
      .where("config_id", "=", row.config_id)
      .executeTakeFirst();
    if (!config) return null;
    return {
      url: config.url,
      token: config.token,
      authScheme: config.auth_scheme,
      authCredentials: config.auth_credentials,
      secretRevision: 1,
    };
  }

  /**
   * A webhook row's endpoint as it is now. A row whose endpoint was disabled since it was queued
   * is abandoned here (a disabled endpoint receives nothing); one whose endpoint is gone, dropped.
   */
  private async endpointOf(row: OutboxRow, now: number) {
    const endpoint = await this.db
      .selectFrom("webhook_endpoints")
      .select(["url", "secret_sealed", "secret_revision", "state"])
      .where("workspace_id", "=", row.workspace_id)
      .where("id", "=", row.config_id)
      .executeTakeFirst();
    if (endpoint?.state !== "enabled") {
      const key = this.db
        .updateTable("push_outbox")
        .where("workspace_id", "=", row.workspace_id)
        .where("task_id", "=", row.task_id)
        .where("config_id", "=", row.config_id)
        .where("position", "=", row.position);
      if (endpoint) {
        await key
          .set({
            state: "abandoned",
            settled_at: now,
            last_error: "the endpoint is disabled",
            lease_owner: null,
            lease_until: null,
          })
          .execute();
      }
      return null;
    }
    return {
      url: endpoint.url,
      token: endpoint.secret_sealed,
      authScheme: "",
      authCredentials: "",
      secretRevision: Number(endpoint.secret_revision),
    };
  }

  async nextDueAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom("push_outbox as o")
      .select(
        sql<
          number | string | null
        >`min(case when o.lease_until > o.next_attempt_at then o.lease_until else o.next_attempt_at end)`.as(
          "due",
        ),
      )
      .where("o.state", "=", "pending")
      // As in `claim`: a row behind an undelivered one of its subscription is not due before it.
      .where(firstPendingOfItsConfig)
      .executeTakeFirst();
    return row?.due === null || row?.due === undefined ? null : Number(row.due);
  }

  /**
   * Ends every lease: only for a database one process owns (SQLite under its file lock), whose
   * previous incarnation is gone, so the rows it held go out now instead of after their lease.
   */
  async lapseAllLeases(): Promise<number> {
    const result = await this.db
      .updateTable("push_outbox")
      .set({ lease_owner: null, lease_until: null })
      .where("state", "=", "pending")
      .where("lease_owner", "is not", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async settle(d: PushDelivery, owner: string, outcome: PushSettlement, now: number): Promise<boolean> {
    const set =
      outcome.kind === "delivered"
        ? { state: "delivered", settled_at: now, last_error: null }
        : outcome.kind === "retry"
          ? { next_attempt_at: outcome.at, last_error: outcome.error.slice(0, 200) }
          : { state: "abandoned", settled_at: now, last_error: outcome.error.slice(0, 200) };
    const result = await this.db
      .updateTable("push_outbox")
      .set({ ...set, lease_owner: null, lease_until: null })
      .where("workspace_id", "=", d.workspaceId)
      .where("task_id", "=", d.taskId)
      .where("config_id", "=", d.configId)
      .where("position", "=", d.position)
      .where("lease_owner", "=", owner)
      .where("state", "=", "pending")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

/** An outbox row `o` with no undelivered row of its config before it. */
function firstPendingOfItsConfig({ not, exists, selectFrom }: ExpressionBuilder<OutboxScope, "o">) {
  return not(
    exists(
      selectFrom("push_outbox as e")
        .select("e.position")
        .whereRef("e.workspace_id", "=", "o.workspace_id")
        .whereRef("e.task_id", "=", "o.task_id")
        .whereRef("e.config_id", "=", "o.config_id")
        .where("e.state", "=", "pending")
        .whereRef("e.position", "<", "o.position"),
    ),
  );
}

async function insertRows(
  tx: DbOrTx,
  s: PushSubscription,
  rows: Array<PushMessage & { position: number }>,
  now: number,
): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insertInto("push_outbox")
    .values(
      rows.map((r) => ({
        workspace_id: s.workspaceId,
        task_id: s.taskId,
        config_id: s.configId,
        position: r.position,
        body: r.body,
        content_type: r.contentType,
        state: "pending",
        attempts: 0,
        next_attempt_at: now,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        settled_at: null,
        created_at: now,
        format: "a2a",
        delivery_id: null,
        event_type: null,
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
}

function toConfigRow(s: PushSubscription): ConfigRow {
  return {
    workspace_id: s.workspaceId,
    task_id: s.taskId,
    config_id: s.configId,
    agent_id: s.agentId,
    session_id: s.sessionId,
    thread_id: s.threadId,
    url: s.url,
    token: s.token,
    auth_scheme: s.authScheme,
    auth_credentials: s.authCredentials,
    wire_version: s.wireVersion,
    cursor_seq: s.cursorSeq,
    finished: s.finished ? 1 : 0,
    created_at: s.createdAt,
  };
}

function toSubscription(r: ConfigRow): PushSubscription {
  return {
    workspaceId: r.workspace_id,
    taskId: r.task_id,
    configId: r.config_id,
    agentId: r.agent_id,
    sessionId: r.session_id,
    threadId: r.thread_id,
    url: r.url,
    token: r.token,
    authScheme: r.auth_scheme,
    authCredentials: r.auth_credentials,
    wireVersion: r.wire_version,
    cursorSeq: Number(r.cursor_seq),
    finished: Number(r.finished) === 1,
    createdAt: Number(r.created_at),
  };
}

function toDelivery(r: OutboxRow): PushDelivery {
  return {
    workspaceId: r.workspace_id,
    taskId: r.task_id,
    configId: r.config_id,
    position: Number(r.position),
    body: r.body,
    contentType: r.content_type,
    attempts: Number(r.attempts),
    format: r.format === "webhook" ? "webhook" : "a2a",
    storedId: r.delivery_id,
  };
}
