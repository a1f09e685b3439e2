import { type CommittedFact, INTERNAL_FACT_PREFIX } from "../../coordinator/facts.js";
import type { EventListQuery, HistoryReader, Page } from "../../coordinator/ports.js";
import { rowToFact } from "./appendFacts.js";
import { type Db, decodeCursor, encodeCursor } from "./db.js";

export class SqlHistoryReader implements HistoryReader {
  constructor(private readonly db: Db) {}

  async readThread(threadId: string, afterSeq: number, limit = 10_000): Promise<CommittedFact[]> {
    const rows = await this.db
      .selectFrom("events")
      .selectAll()
      .where("thread_id", "=", threadId)
      .where("seq", ">", afterSeq)
      .orderBy("seq", "asc")
      .limit(limit)
      .execute();
    return rows.map(rowToFact);
  }

  async threadVersion(threadId: string): Promise<number> {
    const row = await this.db
      .selectFrom("threads")
      .select("version")
      .where("id", "=", threadId)
      .executeTakeFirst();
    return row ? Number(row.version) : 0;
  }

  async listEvents(sessionId: string, threadId: string, q: EventListQuery): Promise<Page<CommittedFact>> {
    const cursor = decodeCursor("events", q.cursor);
    const asc = q.order === "asc";
    let query = this.db
      .selectFrom("events")
      .selectAll()
      .where("thread_id", "=", threadId)
      .where("session_id", "=", sessionId)
      // Recovery bookkeeping (e.g. tool intents) holds a version but is no protocol's event.
      .where("type", "not like", `${INTERNAL_FACT_PREFIX}%`);
    if (q.types && q.types.length > 0) query = query.where("type", "in", q.types);
    const c = q.createdAt;
    if (c?.gt !== undefined) query = query.where("created_at", ">", c.gt);
    if (c?.gte !== undefined) query = query.where("created_at", ">=", c.gte);
    if (c?.lt !== undefined) query = query.where("created_at", "<", c.lt);
    if (c?.lte !== undefined) query = query.where("created_at", "<=", c.lte);
    if (cursor && typeof cursor.seq === "number") query = query.where("seq", asc ? ">" : "<", cursor.seq);
    const rows = await query
      .orderBy("seq", asc ? "asc" : "desc")
      .limit(q.limit + 1)
      .execute();
    const data = rows.slice(0, q.limit).map(rowToFact);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: rows.length > q.limit && last ? encodeCursor("events", { seq: last.seq }) : null,
    };
  }
}
