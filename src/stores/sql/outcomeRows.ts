import { decodeCommitted, storedTypesOf } from "../../coordinator/factCodec.js";
import { foldOutcomes, type OutcomeState } from "../../coordinator/outcomes.js";
import { rowFacts } from "./appendFacts.js";
import type { DbOrTx } from "./db.js";
import type { HistoryRow } from "./historyRows.js";

/**
 * A session's outcomes, folded from the commit rows that can hold their facts. Most threads never
 * define an outcome: the rows are found by their stored types' text in `facts_json` (a prefilter
 * the fold confirms fact by fact), so no column or table of their own is kept and the hot paths
 * (a turn's commits, a message's append) read nothing more.
 */

/** The stored types the fold reads: outcome facts, and interrupts (they end an outcome). */
const OUTCOME_TYPES = new Set(
  storedTypesOf("outcome_defined", "outcome_evaluation_start", "outcome_evaluation_end", "interrupt"),
);

/** `facts_json` stores each fact as `[id, type, body]`: a type is found as its quoted text. */
export const OUTCOME_ROW_PATTERNS = [...OUTCOME_TYPES].map((type) => `%"${type}"%`);

/** The prefilter as SQL text, one `?` per pattern (SQLite's synchronous reads). */
export const OUTCOME_ROW_FILTER_SQL = `(${OUTCOME_ROW_PATTERNS.map(() => "facts_json like ?").join(" or ")})`;

export function foldOutcomeRows(rows: readonly HistoryRow[]): OutcomeState[] {
  const facts = rows.flatMap((row) => rowFacts(row).filter((fact) => OUTCOME_TYPES.has(fact.type)));
  return foldOutcomes(facts.map(decodeCommitted));
}

/** The outcomes of each thread (threads without any are absent from the map). */
export async function readOutcomes(
  db: DbOrTx,
  threadIds: readonly string[],
): Promise<Map<string, OutcomeState[]>> {
  const found = new Map<string, OutcomeState[]>();
  if (threadIds.length === 0) return found;
  const rows = await db
    .selectFrom("commits")
    .select(["thread_id", "base_version", "session_id", "facts_json", "created_at"])
    .where("thread_id", "in", [...threadIds])
    .where((eb) => eb.or(OUTCOME_ROW_PATTERNS.map((pattern) => eb("facts_json", "like", pattern))))
    .orderBy("thread_id")
    .orderBy("base_version")
    .execute();
  const byThread = new Map<string, HistoryRow[]>();
  for (const row of rows) {
    const list = byThread.get(row.thread_id) ?? [];
    list.push(row);
    byThread.set(row.thread_id, list);
  }
  for (const [threadId, list] of byThread) {
    const outcomes = foldOutcomeRows(list);
    if (outcomes.length > 0) found.set(threadId, outcomes);
  }
  return found;
}
