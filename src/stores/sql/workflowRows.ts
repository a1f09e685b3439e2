import { decodeCommitted } from "../../coordinator/factCodec.js";
import { foldWorkflowRuns, type WorkflowRunState } from "../../coordinator/workflowFold.js";
import { rowFacts } from "./appendFacts.js";
import type { DbOrTx } from "./db.js";
import type { HistoryRow } from "./historyRows.js";

/**
 * A thread's workflow runs not yet ended, folded from the commit rows that can hold their facts
 * (found by their stored types' text, as `outcomeRows.ts` finds outcomes): read only by an
 * interrupt, which ends them, so no hot path reads anything more.
 */

/** The stored types the fold reads: a run's creation, its phases and its end. */
const WORKFLOW_TYPES = new Set(
  ["created", "phase_started", "phase_ended", "status_ended"].map((change) => `workflow_run.${change}`),
);

/** `facts_json` stores each fact as `[id, type, body]`: a type is found as its quoted text. */
export const WORKFLOW_ROW_PATTERNS = [...WORKFLOW_TYPES].map((type) => `%"${type}"%`);

/** The prefilter as SQL text, one `?` per pattern (SQLite's synchronous reads). */
export const WORKFLOW_ROW_FILTER_SQL = `(${WORKFLOW_ROW_PATTERNS.map(() => "facts_json like ?").join(" or ")})`;

export function foldOpenWorkflowRows(rows: readonly HistoryRow[]): WorkflowRunState[] {
  const facts = rows.flatMap((row) => rowFacts(row).filter((fact) => WORKFLOW_TYPES.has(fact.type)));
  return [...foldWorkflowRuns(facts.map(decodeCommitted)).values()].filter((run) => !run.ended);
}

/** One thread's workflow runs not yet ended. */
export async function readOpenWorkflows(db: DbOrTx, threadId: string): Promise<WorkflowRunState[]> {
  const rows = await db
    .selectFrom("commits")
    .select(["thread_id", "base_version", "session_id", "facts_json", "created_at"])
    .where("thread_id", "=", threadId)
    .where((eb) => eb.or(WORKFLOW_ROW_PATTERNS.map((pattern) => eb("facts_json", "like", pattern))))
    .orderBy("base_version")
    .execute();
  return foldOpenWorkflowRows(rows);
}
