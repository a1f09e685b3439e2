import { sql } from "kysely";
import type { SessionStatus } from "../../coordinator/facts.js";
import type { Page, SessionRecord, ThreadListQuery, ThreadRecord } from "../../coordinator/ports.js";
import { type DbOrTx, decodeCursor, encodeCursor } from "./db.js";
import { usageOf } from "./sessionRows.js";

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
      threadStatus.as("status"),
      sql<string>`coalesce(h.usage_json, s.usage_json)`.as("usage_json"),
      sql<number | null>`h.created_at`.as("head_at"),
    ])
    .where("t.session_id", "=", sessionId);
}

type ThreadRow = {
  id: string;
  created_at: number | string;
  status: string;
  usage_json: string;
  head_at: number | string | null;
};

function rowToThread(session: SessionRecord, row: ThreadRow): ThreadRecord {
  const createdAt = Number(row.created_at);
  return {
    id: row.id,
    sessionId: session.id,
    // The threads table holds only primary threads so far: nothing spawns a child thread yet.
    parentThreadId: null,
    // An archived session's threads read as terminated, as the session itself does (wire §2.3).
    status: session.archivedAt !== null ? "terminated" : (row.status as SessionStatus),
    usage: usageOf(row.usage_json),
    committed: row.head_at !== null,
    createdAt,
    updatedAt: row.head_at === null ? createdAt : Math.max(createdAt, Number(row.head_at)),
    archivedAt: row.id === session.threadId ? session.archivedAt : null,
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
    const archived = session.archivedAt !== null;
    if (archived && !q.statuses.includes("terminated")) return { data: [], nextCursor: null };
    if (!archived) query = query.where(threadStatus, "in", q.statuses);
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
