import { sql } from "kysely";
import type {
  CredentialPin,
  Page,
  SessionListQuery,
  SessionRecord,
  SessionStore,
  ThreadListQuery,
  ThreadRecord,
} from "../../coordinator/ports.js";
import type { SessionResourceRecord } from "../../resources/ports.js";
import { type Db, decodeCursor, encodeCursor, type Tx, toJson } from "./db.js";
import { selectSessions, sessionRowOf, sessionStatus } from "./sessionHead.js";
import { boundUnder } from "./sessionNamePrefix.js";
import { rowToSession, sessionToRow } from "./sessionRows.js";
import { archiveThread, getThread, listThreads } from "./sessionThreads.js";
import { insertSessionResources } from "./sqlSessionResourceStore.js";

export class SqlSessionStore implements SessionStore {
  constructor(protected readonly db: Db) {}

  async create(record: SessionRecord, resources: readonly SessionResourceRecord[] = []): Promise<void> {
    await this.db.transaction().execute((tx) => this.insertIn(tx, record, resources));
  }

  /** The session's rows, its thread's and its resources', in the caller's transaction. */
  protected async insertIn(
    tx: Tx,
    record: SessionRecord,
    resources: readonly SessionResourceRecord[],
  ): Promise<void> {
    const { session, thread } = this.insertValues(record);
    await tx.insertInto("sessions").values(session).execute();
    await tx.insertInto("threads").values(thread).execute();
    await insertSessionResources(tx, resources);
  }

  /** The rows a new session writes: its session row and its thread's. */
  protected insertValues(record: SessionRecord) {
    const row = sessionToRow(record);
    // The catalog holds this snapshot already (the usual case: no override): the row points at it.
    const snapshot =
      record.agent.workspaceId === record.workspaceId
        ? sql<string>`case when (select ea.snapshot_json from executable_agents ea where ea.workspace_id = ${record.agent.workspaceId} and ea.agent_id = ${record.agent.agentId} and ea.version = ${record.agent.version}) = ${row.agent_snapshot_json} then '' else ${row.agent_snapshot_json} end`
        : row.agent_snapshot_json;
    return {
      session: { ...row, agent_snapshot_json: snapshot },
      thread: { id: record.threadId, session_id: record.id, created_at: record.createdAt },
    };
  }

  async updateCredentialPins(workspaceId: string, sessionId: string, pins: CredentialPin[]): Promise<void> {
    await this.db
      .updateTable("sessions")
      .set({ credential_pins_json: toJson(pins) })
      .where("id", "=", sessionId)
      .where("workspace_id", "=", workspaceId)
      .execute();
  }

  async get(workspaceId: string, id: string): Promise<SessionRecord | null> {
    const row = await selectSessions(this.db)
      .where("s.id", "=", id)
      .where("s.workspace_id", "=", workspaceId)
      .where("s.deleted_at", "is", null)
      .executeTakeFirst();
    return row ? rowToSession(sessionRowOf(row)) : null;
  }

  async getWithThreadVersion(
    workspaceId: string,
    id: string,
  ): Promise<{ session: SessionRecord; threadVersion: number } | null> {
    const row = await selectSessions(this.db)
      .where("s.id", "=", id)
      .where("s.workspace_id", "=", workspaceId)
      .where("s.deleted_at", "is", null)
      .executeTakeFirst();
    return row
      ? { session: rowToSession(sessionRowOf(row)), threadVersion: Number(row.thread_version) }
      : null;
  }

  /**
   * Bidirectional keyset pagination over time-sortable ids. A cursor remembers the boundary id and
   * which way it points, so `prev_page` walks back from the first row of the page it came from.
   */
  async list(workspaceId: string, q: SessionListQuery): Promise<Page<SessionRecord>> {
    const cursor = decodeCursor("sessions", q.cursor);
    const backwards = cursor?.dir === "prev";
    const ascending = (q.order === "asc") !== backwards;
    let query = selectSessions(this.db)
      .where("s.workspace_id", "=", workspaceId)
      .where("s.deleted_at", "is", null);
    if (!q.includeArchived) query = query.where("s.archived_at", "is", null);
    if (q.agentId) query = query.where("s.agent_id", "=", q.agentId);
    if (q.agentIds) {
      if (q.agentIds.length === 0) return { data: [], nextCursor: null, prevCursor: null };
      query = query.where("s.agent_id", "in", [...q.agentIds]);
    }
    if (q.ids) {
      if (q.ids.length === 0) return { data: [], nextCursor: null, prevCursor: null };
      query = query.where("s.id", "in", [...q.ids]);
    }
    if (q.namePrefix !== undefined) query = query.where(boundUnder(q.namePrefix));
    if (q.agentVersion !== undefined) query = query.where("s.agent_version", "=", q.agentVersion);
    if (q.memoryStoreId !== undefined) {
      const storeId = q.memoryStoreId;
      query = query.where("s.id", "in", (eb) =>
        eb
          .selectFrom("session_resources")
          .select("session_id")
          .where("workspace_id", "=", workspaceId)
          .where("memory_store_id", "=", storeId),
      );
    }
    if (q.deploymentId !== undefined) {
      const deploymentId = q.deploymentId;
      query = query.where("s.id", "in", (eb) =>
        eb
          .selectFrom("deployment_runs")
          .select("session_id")
          .where("workspace_id", "=", workspaceId)
          .where("deployment_id", "=", deploymentId)
          .where("session_id", "is not", null)
          .$narrowType<{ session_id: string }>(),
      );
    }
    if (q.statuses && q.statuses.length > 0) {
      // Archived sessions read as terminated (wire §2.3), so the filter must agree with the DTO.
      const statuses = q.statuses;
      query = query.where((eb) =>
        eb.or([
          eb.and([eb("s.archived_at", "is", null), eb(sessionStatus, "in", statuses)]),
          ...(statuses.includes("terminated") ? [eb("s.archived_at", "is not", null)] : []),
        ]),
      );
    }
    const c = q.createdAt;
    if (c?.gt !== undefined) query = query.where("s.created_at", ">", c.gt);
    if (c?.gte !== undefined) query = query.where("s.created_at", ">=", c.gte);
    if (c?.lt !== undefined) query = query.where("s.created_at", "<", c.lt);
    if (c?.lte !== undefined) query = query.where("s.created_at", "<=", c.lte);
    if (cursor && typeof cursor.id === "string")
      query = query.where("s.id", ascending ? ">" : "<", cursor.id);
    const rows = await query
      .orderBy("s.id", ascending ? "asc" : "desc")
      .limit(q.limit + 1)
      .execute();
    const hasMore = rows.length > q.limit;
    const pageRows = rows.slice(0, q.limit);
    if (backwards) pageRows.reverse();
    const data = pageRows.map((row) => rowToSession(sessionRowOf(row)));
    const first = data[0];
    const last = data[data.length - 1];
    const moreAfter = backwards ? cursor !== null : hasMore;
    const moreBefore = backwards ? hasMore : cursor !== null;
    return {
      data,
      nextCursor: moreAfter && last ? encodeCursor("sessions", { id: last.id, dir: "next" }) : null,
      prevCursor: moreBefore && first ? encodeCursor("sessions", { id: first.id, dir: "prev" }) : null,
    };
  }

  listThreads(session: SessionRecord, query: ThreadListQuery): Promise<Page<ThreadRecord>> {
    return listThreads(this.db, session, query);
  }

  getThread(session: SessionRecord, threadId: string): Promise<ThreadRecord | null> {
    return getThread(this.db, session, threadId);
  }

  archiveThread(sessionId: string, threadId: string, now: number): Promise<boolean> {
    return archiveThread(this.db, sessionId, threadId, now);
  }
}
