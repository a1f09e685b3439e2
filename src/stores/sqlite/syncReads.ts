import { decodeFact } from "../../coordinator/factCodec.js";
import type { CommittedFact } from "../../coordinator/facts.js";
import type { OutcomeState } from "../../coordinator/outcomes.js";
import type { InputContext } from "../../coordinator/ports.js";
import type { WorkflowRunState } from "../../coordinator/workflowFold.js";
import {
  operationIdOf,
  type receiptOfRow,
  type StoredOperation,
  storedOperation,
} from "../sql/commitWrites.js";
import { factsAfter, HISTORY_COLUMNS, type HistoryRow, lastOfTypes } from "../sql/historyRows.js";
import { foldOutcomeRows, OUTCOME_ROW_FILTER_SQL, OUTCOME_ROW_PATTERNS } from "../sql/outcomeRows.js";
import { type Head, headFrom } from "../sql/sessionHead.js";
import { MODEL_REQUEST_TYPES, openRequestOf } from "../sql/sqlInputLedger.js";
import { foldOpenWorkflowRows, WORKFLOW_ROW_FILTER_SQL, WORKFLOW_ROW_PATTERNS } from "../sql/workflowRows.js";
import type { SyncSql } from "./syncWriter.js";

/** The reads of SQLite's executor, each one indexed lookup inside its synchronous transaction. */

export function headSync(sql: SyncSql, threadId: string): Head | null {
  const row = sql.get<{
    version: number;
    status: string | null;
    pending_json: string | null;
    usage_json: string | null;
  }>(
    "select version, status, pending_json, usage_json from commits where thread_id = ? order by base_version desc limit 1",
    threadId,
  );
  return row ? headFrom(row) : null;
}

/** Facts of a thread after `afterSeq`, ascending, at most `limit`. */
export function readThreadSync(
  sql: SyncSql,
  threadId: string,
  afterSeq: number,
  limit: number,
): CommittedFact[] {
  // The commit holding version afterSeq + 1 is the last one based at or below afterSeq.
  const rows = sql.all<HistoryRow>(
    `select ${HISTORY_COLUMNS} from commits where thread_id = ? and base_version >= coalesce((select max(base_version) from commits where thread_id = ? and base_version <= ?), 0) order by base_version limit ?`,
    threadId,
    threadId,
    afterSeq,
    limit,
  );
  return factsAfter(rows, afterSeq, limit);
}

/**
 * The operation `op` names, if it was stored: a commit row's (an operation appends at its expected
 * version, so its row, if any, is the one based there), or a `commit_operations` row's.
 */
export function storedOperationSync(
  sql: SyncSql,
  op: { opId: string; threadId: string; expectedVersion: number },
): StoredOperation | null {
  const row = sql.get<Parameters<typeof receiptOfRow>[0] & { payload_hash: string | null }>(
    "select op_id, run_id, thread_id, base_version, version, facts_json, created_at, settled, payload_hash from commits where thread_id = ? and base_version = ?",
    op.threadId,
    op.expectedVersion,
  );
  if (row && operationIdOf(row) === op.opId) return storedOperation(row);
  const old = sql.get<{ payload_hash: string; receipt_json: string }>(
    "select payload_hash, receipt_json from commit_operations where op_id = ?",
    op.opId,
  );
  return old ? storedOperation(old) : null;
}

/** The request the thread's last model request span left open, if any. */
export function openRequestSync(sql: SyncSql, threadId: string): InputContext["openModelRequest"] {
  let below: number | null = null;
  for (;;) {
    const rows: HistoryRow[] = sql.all<HistoryRow>(
      `select ${HISTORY_COLUMNS} from commits where thread_id = ? and base_version < ? order by base_version desc limit 16`,
      threadId,
      below ?? Number.MAX_SAFE_INTEGER,
    );
    const last = lastOfTypes(rows, MODEL_REQUEST_TYPES);
    if (last) return openRequestOf(decodeFact(last));
    const oldest = rows.at(-1);
    if (!oldest || rows.length < 16) return null;
    below = Number(oldest.base_version);
  }
}

/** One thread's workflow runs not yet ended (see `workflowRows.ts`), inside the transaction. */
export function readOpenWorkflowsSync(sql: SyncSql, threadId: string): WorkflowRunState[] {
  const rows = sql.all<HistoryRow>(
    `select ${HISTORY_COLUMNS} from commits where thread_id = ? and ${WORKFLOW_ROW_FILTER_SQL} order by base_version`,
    threadId,
    ...WORKFLOW_ROW_PATTERNS,
  );
  return foldOpenWorkflowRows(rows);
}

/** One thread's outcomes (see `outcomeRows.ts`), inside SQLite's synchronous transaction. */
export function readOutcomesSync(sql: SyncSql, threadId: string): OutcomeState[] {
  const rows = sql.all<HistoryRow>(
    `select ${HISTORY_COLUMNS} from commits where thread_id = ? and ${OUTCOME_ROW_FILTER_SQL} order by base_version`,
    threadId,
    ...OUTCOME_ROW_PATTERNS,
  );
  return foldOutcomeRows(rows);
}
