import { type Actor, type AuditAction, auditEntry } from "../../control/adminAudit.js";
import type {
  DeliveryState,
  WebhookDeliveryView,
  WebhookEndpoint,
  WebhookEventRow,
  WebhookSessionCursor,
  WebhookStore,
} from "../../coordinator/webhookOutbox.js";
import { newId } from "../../kernel/ids.js";
import { begin, type Db, type DbOrTx, type SqlDialect } from "./db.js";
import type { Database } from "./schema.js";
import { writeAudit } from "./sqlAdminAudit.js";

type EndpointRow = Database["webhook_endpoints"];
type CursorRow = Database["webhook_session_cursors"];

const CONTENT_TYPE = "application/json";
/**
 * How far before the newest followed session a round still looks for unfollowed ones: more than
 * any clock difference between replicas and any session-creating transaction's length.
 */
const DISCOVERY_SLACK_MS = 10 * 60_000;

/**
 * Webhook endpoints, the session cursors their events follow, and their rows in the one outbox
 * (`push_outbox`, format `webhook`), in dialect-neutral Kysely. An endpoint's change and its admin
 * audit entry commit together; a session cursor moves in the transaction that appends its rows.
 */
export class SqlWebhookStore implements WebhookStore {
  constructor(
    private readonly db: Db,
    private readonly dialect: SqlDialect = "sqlite",
  ) {}

  async createEndpoint(by: Actor, e: WebhookEndpoint, sealedSecret: string): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      await tx
        .insertInto("webhook_endpoints")
        .values({ ...toRow(e), secret_sealed: sealedSecret })
        .execute();
      await writeAudit(tx, endpointAudit(by, "create", null, e, e.createdAt));
      return true;
    });
  }

  async endpoint(workspaceId: string, id: string): Promise<WebhookEndpoint | null> {
    const row = await this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? toEndpoint(row) : null;
  }

  async endpoints(workspaceId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db
      .selectFrom("webhook_endpoints")
      .selectAll()
      .where("workspace_id", "=", workspaceId)
      .orderBy("created_at", "asc")
      .orderBy("id", "asc")
      .execute();
    return rows.map(toEndpoint);
  }

  async updateEndpoint(by: Actor, before: WebhookEndpoint, next: WebhookEndpoint): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const { secret_sealed: _sealed, ...row } = { ...toRow(next), secret_sealed: "" };
      const updated = await tx
        .updateTable("webhook_endpoints")
        .set(row)
        .where("workspace_id", "=", before.workspaceId)
        .where("id", "=", before.id)
        .where("updated_at", "=", before.updatedAt)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      if (next.state === "disabled" && before.state === "enabled") {
        // Events that happen while an endpoint is disabled are never delivered (SDK): neither are
        // the ones still waiting when it was disabled.
        await tx
          .updateTable("push_outbox")
          .set({
            state: "abandoned",
            settled_at: next.updatedAt,
            last_error: "the endpoint was disabled",
            lease_owner: null,
            lease_until: null,
          })
          .where("workspace_id", "=", before.workspaceId)
          .where("config_id", "=", before.id)
          .where("format", "=", "webhook")
          .where("state", "=", "pending")
          .execute();
      }
      await writeAudit(tx, endpointAudit(by, "update", before, next, next.updatedAt));
      return true;
    });
  }

  async replaceSecret(
    by: Actor,
    before: WebhookEndpoint,
    next: WebhookEndpoint,
    sealedSecret: string,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const updated = await tx
        .updateTable("webhook_endpoints")
        .set({
          secret_sealed: sealedSecret,
          secret_revision: next.secretRevision,
          updated_at: next.updatedAt,
        })
        .where("workspace_id", "=", before.workspaceId)
        .where("id", "=", before.id)
        .where("secret_revision", "=", before.secretRevision)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await writeAudit(tx, endpointAudit(by, "rotate", before, next, next.updatedAt));
      return true;
    });
  }

  async deleteEndpoint(by: Actor, e: WebhookEndpoint, now: number): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const gone = await tx
        .deleteFrom("webhook_endpoints")
        .where("workspace_id", "=", e.workspaceId)
        .where("id", "=", e.id)
        .executeTakeFirst();
      if (Number(gone.numDeletedRows) === 0) return false;
      await tx
        .deleteFrom("push_outbox")
        .where("workspace_id", "=", e.workspaceId)
        .where("config_id", "=", e.id)
        .where("format", "=", "webhook")
        .where("state", "=", "pending")
        .execute();
      await writeAudit(tx, endpointAudit(by, "delete", e, null, now));
      return true;
    });
  }

  async enqueue(
    workspaceId: string,
    event: WebhookEventRow,
    stream: { id: string; position: number },
    now: number,
  ): Promise<number> {
    return fanOut(this.db, workspaceId, stream.id, [{ ...event, position: stream.position }], now);
  }

  async discoverSessions(
    now: number,
    limit: number,
    created: (s: WebhookSessionCursor) => WebhookEventRow,
  ): Promise<{ found: number; workspaces: number }> {
    // A workspace's sessions are followed from the first endpoint it ever had on (earlier sessions
    // stay unfollowed: no endpoint could have wanted their events).
    const firsts = await this.db
      .selectFrom("webhook_endpoints")
      .select(["workspace_id", (eb) => eb.fn.min("created_at").as("since")])
      .groupBy("workspace_id")
      .execute();
    let found = 0;
    for (const { workspace_id, since } of firsts) {
      // Sessions older than the newest one already followed (less a slack for replicas' clocks)
      // were looked at by an earlier round: each round scans only the recent ones.
      const newest = await this.db
        .selectFrom("webhook_session_cursors")
        .select((eb) => eb.fn.max("created_at").as("at"))
        .where("workspace_id", "=", workspace_id)
        .executeTakeFirst();
      const from = Math.max(
        Number(since),
        newest?.at === null || newest?.at === undefined ? 0 : Number(newest.at) - DISCOVERY_SLACK_MS,
      );
      const fresh = await this.db
        .selectFrom("sessions as s")
        .select(["s.id", "s.thread_id", "s.created_at"])
        .where("s.workspace_id", "=", workspace_id)
        .where("s.created_at", ">=", from)
        .where("s.deleted_at", "is", null)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("webhook_session_cursors as c")
                .select("c.session_id")
                .whereRef("c.session_id", "=", "s.id"),
            ),
          ),
        )
        .orderBy("s.created_at", "asc")
        .limit(limit)
        .execute();
      for (const s of fresh) {
        const cursor: WebhookSessionCursor = {
          sessionId: s.id,
          workspaceId: workspace_id,
          threadId: s.thread_id,
          cursorSeq: 0,
          createdAt: Number(s.created_at),
        };
        const inserted = await begin(this.db, this.dialect).execute(async (tx) => {
          const row = await tx
            .insertInto("webhook_session_cursors")
            .values(toCursorRow(cursor))
            .onConflict((oc) => oc.doNothing())
            .executeTakeFirst();
          if (Number(row.numInsertedOrUpdatedRows ?? 0) !== 1) return false;
          // Position 0: before every fact's rows (a fact's start at seq 1 and beyond).
          await fanOut(tx, workspace_id, s.id, [{ ...created(cursor), position: 0 }], now);
          return true;
        });
        if (inserted) found += 1;
      }
    }
    return { found, workspaces: firsts.length };
  }

  async followingSessions(
    limit: number,
    after: WebhookSessionCursor | null,
  ): Promise<WebhookSessionCursor[]> {
    const rows = await this.db
      .selectFrom("webhook_session_cursors as c")
      .selectAll("c")
      .where("c.finished", "=", 0)
      // Only sessions with a commit past their cursor (its facts hold versions above the cursor):
      // an idle session costs one index probe a round, not a history read.
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom("commits as k")
            .select("k.thread_id")
            .whereRef("k.thread_id", "=", "c.thread_id")
            .whereRef("k.base_version", ">=", "c.cursor_seq"),
        ),
      )
      .$if(after !== null, (qb) => qb.where("c.session_id", ">", after?.sessionId ?? ""))
      .orderBy("c.session_id", "asc")
      .limit(limit)
      .execute();
    return rows.map(toCursor);
  }

  async advanceSession(
    from: WebhookSessionCursor,
    toSeq: number,
    finished: boolean,
    events: Array<WebhookEventRow & { position: number }>,
    now: number,
  ): Promise<boolean> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const moved = await tx
        .updateTable("webhook_session_cursors")
        .set({ cursor_seq: toSeq, finished: finished ? 1 : 0 })
        .where("session_id", "=", from.sessionId)
        .where("cursor_seq", "=", from.cursorSeq)
        .where("finished", "=", 0)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) return false;
      await fanOut(tx, from.workspaceId, from.sessionId, events, now);
      return true;
    });
  }

  async deliveries(
    workspaceId: string,
    endpointId: string,
    query: { state: DeliveryState | null; limit: number; before: string | null; id?: string },
  ): Promise<WebhookDeliveryView[]> {
    const rows = await this.db
      .selectFrom("push_outbox")
      .select([
        "delivery_id",
        "body",
        "event_type",
        "state",
        "attempts",
        "last_error",
        "next_attempt_at",
        "created_at",
        "settled_at",
      ])
      .where("workspace_id", "=", workspaceId)
      .where("config_id", "=", endpointId)
      .where("format", "=", "webhook")
      .$if(query.state !== null, (qb) => qb.where("state", "=", query.state ?? ""))
      .$if(query.before !== null, (qb) => qb.where("delivery_id", "<", query.before ?? ""))
      .$if(query.id !== undefined, (qb) => qb.where("delivery_id", "=", query.id ?? ""))
      .orderBy("delivery_id", "desc")
      .limit(query.limit)
      .execute();
    return rows.map((r) => ({
      deliveryId: r.delivery_id ?? "",
      eventId: eventIdOf(r.body),
      eventType: r.event_type ?? "",
      state: r.state as DeliveryState,
      attempts: Number(r.attempts),
      lastError: r.last_error,
      nextAttemptAt: Number(r.next_attempt_at),
      createdAt: Number(r.created_at),
      settledAt: r.settled_at === null ? null : Number(r.settled_at),
    }));
  }

  async redeliver(
    workspaceId: string,
    endpointId: string,
    deliveryId: string,
    now: number,
  ): Promise<boolean> {
    // A row still leased keeps its lease: its holder settles it, and the redelivery waits for that.
    const result = await this.db
      .updateTable("push_outbox")
      .set({ state: "pending", attempts: 0, next_attempt_at: now, settled_at: null, last_error: null })
      .where("workspace_id", "=", workspaceId)
      .where("config_id", "=", endpointId)
      .where("format", "=", "webhook")
      .where("delivery_id", "=", deliveryId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}

/** One row per (event, endpoint that takes it): each with its own stable delivery id. */
async function fanOut(
  tx: DbOrTx,
  workspaceId: string,
  streamId: string,
  events: Array<WebhookEventRow & { position: number }>,
  now: number,
): Promise<number> {
  if (events.length === 0) return 0;
  const endpoints = await tx
    .selectFrom("webhook_endpoints")
    .select(["id", "enabled_events_json"])
    .where("workspace_id", "=", workspaceId)
    .where("state", "=", "enabled")
    .execute();
  const rows: Database["push_outbox"][] = [];
  for (const endpoint of endpoints) {
    const wanted = new Set(parseEvents(endpoint.enabled_events_json));
    for (const event of events) {
      if (!wanted.has(event.type)) continue;
      rows.push({
        workspace_id: workspaceId,
        task_id: streamId,
        config_id: endpoint.id,
        position: event.position,
        body: event.body,
        content_type: CONTENT_TYPE,
        state: "pending",
        attempts: 0,
        next_attempt_at: now,
        lease_owner: null,
        lease_until: null,
        last_error: null,
        settled_at: null,
        created_at: now,
        format: "webhook",
        delivery_id: newId("msg", now),
        event_type: event.type,
      });
    }
  }
  if (rows.length === 0) return 0;
  await tx
    .insertInto("push_outbox")
    .values(rows)
    .onConflict((oc) => oc.doNothing())
    .execute();
  return rows.length;
}

function eventIdOf(body: string): string {
  try {
    const parsed = JSON.parse(body) as { id?: unknown };
    return typeof parsed.id === "string" ? parsed.id : "";
  } catch {
    return "";
  }
}

function parseEvents(json: string): string[] {
  try {
    const parsed = JSON.parse(json) as unknown;
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === "string") : [];
  } catch {
    return [];
  }
}

/** The audited view: what a read answers, never the secret (its revision says it changed). */
function endpointAudit(
  by: Actor,
  action: AuditAction,
  before: WebhookEndpoint | null,
  after: WebhookEndpoint | null,
  at: number,
) {
  const view = after ?? before;
  return auditEntry(by, {
    action,
    resourceType: "webhook_endpoint",
    resourceId: view?.id ?? "",
    revision: view?.secretRevision ?? null,
    before,
    after,
    at,
  });
}

function toRow(e: WebhookEndpoint): EndpointRow {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    name: e.name,
    description: e.description,
    url: e.url,
    enabled_events_json: JSON.stringify(e.enabledEvents),
    state: e.state,
    disabled_reason: e.disabledReason,
    secret_sealed: "",
    secret_revision: e.secretRevision,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

function toEndpoint(r: EndpointRow): WebhookEndpoint {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    url: r.url,
    enabledEvents: parseEvents(r.enabled_events_json),
    state: r.state === "disabled" ? "disabled" : "enabled",
    disabledReason: r.disabled_reason,
    secretRevision: Number(r.secret_revision),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function toCursorRow(c: WebhookSessionCursor): CursorRow {
  return {
    session_id: c.sessionId,
    workspace_id: c.workspaceId,
    thread_id: c.threadId,
    cursor_seq: c.cursorSeq,
    finished: 0,
    created_at: c.createdAt,
  };
}

function toCursor(r: CursorRow): WebhookSessionCursor {
  return {
    sessionId: r.session_id,
    workspaceId: r.workspace_id,
    threadId: r.thread_id,
    cursorSeq: Number(r.cursor_seq),
    createdAt: Number(r.created_at),
  };
}
