import type { AnswerWrites, CommitWrites } from "../sql/commitWrites.js";
import type { InputWrites } from "../sql/inputWrites.js";
import type { RunUpdate } from "../sql/runWrites.js";
import type { SyncSql } from "./syncWriter.js";

type Param = string | number | bigint | null;

/**
 * SQLite's executor of the write plans of stores/sql (`inputWrites.ts`, `commitWrites.ts`,
 * `runWrites.ts`), inside its synchronous transactions. The transaction read the head it planned
 * on and nothing else writes meanwhile, so the plan's rows go in as they are; the primary key of
 * `commits` still refuses a second commit at one version. Column names come from the plans' own
 * row types, so the statement texts are few and stay in the statement cache.
 */
export function executeInputWritesSync(sql: SyncSql, sessionId: string, writes: InputWrites): void {
  if (writes.row) insertRow(sql, "commits", writes.row);
  if (writes.session) updateById(sql, "sessions", sessionId, writes.session);
  for (const row of writes.runs.inserts) insertRow(sql, "runs", row);
  if (writes.runs.update) executeRunUpdateSync(sql, writes.runs.update);
  for (const child of writes.threads ?? []) {
    if (child.row) insertRow(sql, "commits", child.row);
    if (child.run) executeRunUpdateSync(sql, child.run);
  }
}

export function executeCommitWritesSync(sql: SyncSql, writes: CommitWrites): void {
  if (writes.row) insertRow(sql, "commits", writes.row);
  if (writes.operation) insertRow(sql, "commit_operations", writes.operation);
  if (writes.run) executeRunUpdateSync(sql, writes.run);
  for (const spawn of writes.spawns) {
    insertRow(sql, "threads", spawn.thread);
    insertRow(sql, "commits", spawn.commit);
    insertRow(sql, "runs", spawn.run);
  }
}

export function executeAnswerWritesSync(sql: SyncSql, writes: AnswerWrites): void {
  insertRow(sql, "commits", writes.row);
  if (writes.resume) executeRunUpdateSync(sql, writes.resume);
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

function insertRow(sql: SyncSql, table: string, row: object): void {
  const entries = Object.entries(row) as [string, Param][];
  sql.run(
    `insert into ${table} (${entries.map(([k]) => k).join(", ")}) values (${entries.map(() => "?").join(", ")})`,
    ...entries.map(([, v]) => v),
  );
}
