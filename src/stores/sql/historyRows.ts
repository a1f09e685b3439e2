import type { CommittedFact } from "../../coordinator/facts.js";
import { rowFacts } from "./appendFacts.js";

/** The columns of a `commits` row that history reads need. */
export const HISTORY_COLUMNS = "thread_id, base_version, session_id, facts_json, created_at";

export interface HistoryRow {
  thread_id: string;
  base_version: number | string;
  session_id: string;
  facts_json: string;
  created_at: number | string;
}

/** The facts of `rows` (ascending) with versions after `afterSeq`, at most `limit`. */
export function factsAfter(rows: readonly HistoryRow[], afterSeq: number, limit: number): CommittedFact[] {
  const facts: CommittedFact[] = [];
  for (const row of rows) {
    for (const fact of rowFacts(row)) {
      if (fact.seq <= afterSeq) continue;
      if (facts.length >= limit) return facts;
      facts.push(fact);
    }
  }
  return facts;
}

/** The newest fact of `rows` (descending) whose type is one of `types`. */
export function lastOfTypes(rows: readonly HistoryRow[], types: readonly string[]): CommittedFact | null {
  for (const row of rows) {
    const facts = rowFacts(row);
    for (let i = facts.length - 1; i >= 0; i--) {
      const fact = facts[i];
      if (fact && types.includes(fact.type)) return fact;
    }
  }
  return null;
}
