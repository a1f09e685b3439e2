import { type RawBuilder, sql } from "kysely";
import { type CommittedFact, INTERNAL_FACT_PREFIX } from "../../coordinator/facts.js";
import type { OutcomeState } from "../../coordinator/outcomes.js";
import type { EventListQuery, HistoryReader, Page } from "../../coordinator/ports.js";
import { rowFacts } from "./appendFacts.js";
import { type Db, type DbOrTx, decodeCursor, encodeCursor } from "./db.js";
import { factsAfter, type HistoryRow } from "./historyRows.js";
import { readOutcomes } from "./outcomeRows.js";
import { readHead } from "./sessionHead.js";

/** Commit rows read per round while a filtered list gathers a page. */
const ROWS_PER_READ = 200;

export class SqlHistoryReader implements HistoryReader {
  constructor(private readonly db: Db) {}

  readThread(threadId: string, afterSeq: number, limit = 10_000): Promise<CommittedFact[]> {
    return readThread(this.db, threadId, afterSeq, limit);
  }

  outcomes(threadIds: readonly string[]): Promise<Map<string, OutcomeState[]>> {
    return readOutcomes(this.db, threadIds);
  }

  async threadVersion(threadId: string): Promise<number> {
    return (await readHead(this.db, threadId))?.version ?? 0;
  }

  async listEvents(sessionId: string, threadId: string, q: EventListQuery): Promise<Page<CommittedFact>> {
    const cursor = decodeCursor("events", q.cursor);
    const asc = q.order === "asc";
    const after = cursor && typeof cursor.seq === "number" ? cursor.seq : null;
    const c = q.createdAt;
    const keep = (f: CommittedFact): boolean =>
      f.sessionId === sessionId &&
      // Recovery bookkeeping (e.g. tool intents) holds a version but is no protocol's event.
      !f.type.startsWith(INTERNAL_FACT_PREFIX) &&
      (!q.types || q.types.length === 0 || q.types.includes(f.type)) &&
      (after === null || (asc ? f.seq > after : f.seq < after));
    const found: CommittedFact[] = [];
    // Walks the thread's commits from the cursor in the list's order, a batch at a time, until a
    // page and one more fact are found.
    let edge: number | RawBuilder<number> | null = asc
      ? after === null
        ? null
        : baseHolding(threadId, after + 1)
      : after;
    for (;;) {
      let query = this.db
        .selectFrom("commits")
        .select(["thread_id", "base_version", "session_id", "facts_json", "created_at"])
        .where("thread_id", "=", threadId);
      if (edge !== null) query = query.where("base_version", asc ? ">=" : "<", edge);
      if (c?.gt !== undefined) query = query.where("created_at", ">", c.gt);
      if (c?.gte !== undefined) query = query.where("created_at", ">=", c.gte);
      if (c?.lt !== undefined) query = query.where("created_at", "<", c.lt);
      if (c?.lte !== undefined) query = query.where("created_at", "<=", c.lte);
      const rows = await query
        .orderBy("base_version", asc ? "asc" : "desc")
        .limit(ROWS_PER_READ)
        .execute();
      for (const row of rows) {
        const facts = rowFacts(row);
        if (!asc) facts.reverse();
        for (const fact of facts) if (keep(fact)) found.push(fact);
      }
      const last = rows.at(-1);
      if (found.length > q.limit || rows.length < ROWS_PER_READ || !last) break;
      edge = asc ? Number(last.base_version) + 1 : Number(last.base_version);
    }
    const data = found.slice(0, q.limit);
    const last = data[data.length - 1];
    return {
      data,
      nextCursor: found.length > q.limit && last ? encodeCursor("events", { seq: last.seq }) : null,
    };
  }
}

/**
 * The base version of the commit that holds version `seq` (0 when none is based below it), as a
 * subquery: reading from it costs no statement of its own.
 */
function baseHolding(threadId: string, seq: number) {
  return sql<number>`coalesce((select max(b.base_version) from commits b where b.thread_id = ${threadId} and b.base_version < ${seq}), 0)`;
}

/** Facts of a thread after `afterSeq`, ascending, at most `limit`. */
export async function readThread(
  db: DbOrTx,
  threadId: string,
  afterSeq: number,
  limit: number,
): Promise<CommittedFact[]> {
  const rows: HistoryRow[] = await db
    .selectFrom("commits")
    .select(["thread_id", "base_version", "session_id", "facts_json", "created_at"])
    .where("thread_id", "=", threadId)
    .where("base_version", ">=", baseHolding(threadId, afterSeq + 1))
    .orderBy("base_version", "asc")
    .limit(limit)
    .execute();
  return factsAfter(rows, afterSeq, limit);
}
