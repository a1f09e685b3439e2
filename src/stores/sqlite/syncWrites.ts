import { type FactAppend, threadMoved } from "../sql/appendFacts.js";
import type { CommitWrites } from "../sql/commitWrites.js";
import type { InputWrites } from "../sql/inputWrites.js";
import type { RunUpdate } from "../sql/runWrites.js";
import type { SyncSql } from "./syncWriter.js";

type Param = string | number | bigint | null;

/**
 * The write plans of stores/sql (`appendFacts.ts`, `inputWrites.ts`, `commitWrites.ts`,
 * `runWrites.ts`) executed inside SQLite's synchronous transactions. Column names come from the
 * plans' own row types, so the statement texts are few and stay in the statement cache.
 */
export function writeFactAppendSync(sql: SyncSql, plan: FactAppend): void {
  if (!plan.version) return;
  for (const e of plan.events) {
    sql.run(
      "insert into events (thread_id, seq, id, session_id, type, body_json, created_at) values (?, ?, ?, ?, ?, ?, ?)",
      e.thread_id,
      e.seq,
      e.id,
      e.session_id,
      e.type,
      e.body_json,
      e.created_at,
    );
  }
  const { threadId, from, to } = plan.version;
  const moved = sql.run("update threads set version = ? where id = ? and version = ?", to, threadId, from);
  if (moved !== 1) throw threadMoved(threadId, from);
}

export function executeInputWritesSync(sql: SyncSql, sessionId: string, writes: InputWrites): void {
  writeFactAppendSync(sql, writes.facts);
  if (writes.session) updateById(sql, "sessions", sessionId, writes.session);
  for (const row of writes.runs.inserts) insertRow(sql, "runs", row, "");
  if (writes.runs.update) executeRunUpdateSync(sql, writes.runs.update);
  if (writes.receipt) {
    insertRow(
      sql,
      "send_receipts",
      writes.receipt,
      " on conflict (session_id) do update set request_hash = excluded.request_hash, response_json = excluded.response_json, created_at = excluded.created_at, body_hash = excluded.body_hash",
    );
  }
}

export function executeCommitWritesSync(sql: SyncSql, sessionId: string, writes: CommitWrites): void {
  writeFactAppendSync(sql, writes.facts);
  if (writes.session) updateById(sql, "sessions", sessionId, writes.session);
  if (writes.run) executeRunUpdateSync(sql, writes.run);
  insertRow(sql, "commit_operations", writes.operation, "");
}

/** One run UPDATE; false when its WHERE matched no row. */
export function executeRunUpdateSync(sql: SyncSql, update: RunUpdate): boolean {
  const keys = Object.keys(update.set) as (keyof RunUpdate["set"])[];
  const params: Param[] = keys.map((k) => update.set[k] ?? null);
  let where = "id = ?";
  params.push(update.id);
  if (update.onlyIfCrashed) where += " and crash_count <> 0";
  if (update.ifEpoch !== null) {
    where += " and epoch = ?";
    params.push(update.ifEpoch);
  }
  return sql.run(`update runs set ${keys.map((k) => `${k} = ?`).join(", ")} where ${where}`, ...params) === 1;
}

function updateById(sql: SyncSql, table: string, id: string, set: object): void {
  const entries = Object.entries(set) as [string, Param][];
  sql.run(
    `update ${table} set ${entries.map(([k]) => `${k} = ?`).join(", ")} where id = ?`,
    ...entries.map(([, v]) => v),
    id,
  );
}

function insertRow(sql: SyncSql, table: string, row: object, suffix: string): void {
  const entries = Object.entries(row) as [string, Param][];
  sql.run(
    `insert into ${table} (${entries.map(([k]) => k).join(", ")}) values (${entries.map(() => "?").join(", ")})${suffix}`,
    ...entries.map(([, v]) => v),
  );
}
