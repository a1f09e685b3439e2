import { sql } from "kysely";
import type { SessionStatus } from "../../coordinator/facts.js";
import type {
  ExecutableAgentSnapshot,
  Page,
  SessionRecord,
  ThreadListQuery,
  ThreadRecord,
} from "../../coordinator/ports.js";
import { type DbOrTx, decodeCursor, encodeCursor, fromJson } from "./db.js";
import { meterOf, pendingOf, usageOf } from "./sessionRows.js";

/** A thread's current status: its head's, or the session row's initial one before its first commit. */
const threadStatus = sql<string>`coalesce(h.status, s.status)`;

/**
 * The threads of one session with their projection: each thread's newest `commits` row (its head)
 * carries its status and usage, as the session's head does for `selectSessions`.
 */
function selectThreads(db: DbOrTx, sessionId: string) {
  return db
    .selectFrom("threads as t")
    .innerJoin("sessions as s", "s.id", "t.session_id")
    .leftJoin("commits as h", (join) =>
      join
        .onRef("h.thread_id", "=", "t.id")
        .on(
          "h.base_version",
          "=",
          sql<number>`(select max(m.base_version) from commits m where m.thread_id = t.id)`,
        ),
    )
    .select([
      "t.id",
      "t.session_id",
      "t.created_at",
      "t.parent_thread_id",
      "t.agent_snapshot_json",
      "t.archived_at",
      threadStatus.as("status"),
      sql<string>`coalesce(h.usage_json, s.usage_json)`.as("usage_json"),
      sql<string>`coalesce(h.pending_json, s.pending_json)`.as("pending_json"),
      sql<number | null>`h.created_at`.as("head_at"),
    ])
    .where("t.session_id", "=", sessionId);
}

type ThreadRow = {
  id: string;
  created_at: number | string;
  parent_thread_id: string | null;
  agent_snapshot_json: string | null;
  archived_at: number | string | null;
  status: string;
  usage_json: string;
  pending_json: string;
  head_at: number | string | null;
};

function rowToThread(session: SessionRecord, row: ThreadRow): ThreadRecord {
  const createdAt = Number(row.created_at);
  // A child thread archived on its own keeps its time; any thread of an archived session reads as
  // archived with it (a primary thread is only ever archived that way).
  const archivedAt = row.archived_at !== null ? Number(row.archived_at) : session.archivedAt;
  return {
    id: row.id,
    sessionId: session.id,
    parentThreadId: row.parent_thread_id,
    agent:
      row.agent_snapshot_json === null ? null : fromJson<ExecutableAgentSnapshot>(row.agent_snapshot_json),
    // An archived thread reads as terminated, as an archived session does (wire §2.3): it takes no input.
    status: archivedAt !== null ? "terminated" : (row.status as SessionStatus),
    usage: usageOf(row.usage_json),
    meter: meterOf(row.usage_json),
    pending: pendingOf(row.pending_json),
    committed: row.head_at !== null,
    createdAt,
    updatedAt: Math.max(createdAt, row.head_at === null ? 0 : Number(row.head_at), archivedAt ?? 0),
    archivedAt,
  };
}

export async function getThread(
  db: DbOrTx,
  session: SessionRecord,
  threadId: string,
): Promise<ThreadRecord | null> {
  const row = await selectThreads(db, session.id).where("t.id", "=", threadId).executeTakeFirst();
  return row ? rowToThread(session, row) : null;
}

/** Keyset pages over the thread ids (time-sortable): oldest first, so the primary thread leads. */
export async function listThreads(
  db: DbOrTx,
  session: SessionRecord,
  q: ThreadListQuery,
): Promise<Page<ThreadRecord>> {
  const cursor = decodeCursor("threads", q.cursor);
  let query = selectThreads(db, session.id);
  if (q.statuses && q.statuses.length > 0) {
    // Archived threads read as terminated, so the filter must agree with `rowToThread`.
    const statuses = q.statuses;
    if (session.archivedAt !== null) {
      if (!statuses.includes("terminated")) return { data: [], nextCursor: null };
    } else {
      query = query.where((eb) =>
        eb.or([
          eb.and([eb("t.archived_at", "is", null), eb(threadStatus, "in", statuses)]),
          ...(statuses.includes("terminated") ? [eb("t.archived_at", "is not", null)] : []),
        ]),
      );
    }
  }
  if (cursor && typeof cursor.id === "string") query = query.where("t.id", ">", cursor.id);
  const rows = await query
    .orderBy("t.id", "asc")
    .limit(q.limit + 1)
    .execute();
  const data = rows.slice(0, q.limit).map((row) => rowToThread(session, row));
  const last = data[data.length - 1];
  return {
    data,
    nextCursor: rows.length > q.limit && last ? encodeCursor("threads", { id: last.id }) : null,
  };
}

/** Archives a child thread of the session (never a primary: its archive is its session's). */
export async function archiveThread(
  db: DbOrTx,
  sessionId: string,
  threadId: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable("threads")
    .set({ archived_at: now })
    .where("id", "=", threadId)
    .where("session_id", "=", sessionId)
    .where("parent_thread_id", "is not", null)
    .where("archived_at", "is", null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
