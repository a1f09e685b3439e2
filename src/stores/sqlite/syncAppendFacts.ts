import { decodeFact } from "../../coordinator/factCodec.js";
import type {
  CommittedFact,
  Fact,
  PendingAction,
  SessionStatus,
  SessionUsage,
} from "../../coordinator/facts.js";
import { projectFacts } from "../../coordinator/sessionProjection.js";
import type { SyncSql } from "./syncWriter.js";

/**
 * The synchronous twin of `stores/sql/appendFacts.ts` for SQLite's hot paths: append at the
 * current version, bump the version (re-checked in the UPDATE), fold the facts into the session.
 */
export function appendFactsSync(
  sql: SyncSql,
  sessionId: string,
  threadId: string,
  currentVersion: number,
  facts: readonly Fact[],
  now: number,
): CommittedFact[] {
  if (facts.length === 0) return [];
  const committed = facts.map((fact, i) => ({
    ...fact,
    sessionId,
    threadId,
    seq: currentVersion + i + 1,
    createdAt: now,
  }));
  for (const f of committed) {
    sql.run(
      "insert into events (thread_id, seq, id, session_id, type, body_json, created_at) values (?, ?, ?, ?, ?, ?, ?)",
      threadId,
      f.seq,
      f.id,
      sessionId,
      f.type,
      JSON.stringify(f.body),
      now,
    );
  }
  const moved = sql.run(
    "update threads set version = ? where id = ? and version = ?",
    currentVersion + facts.length,
    threadId,
    currentVersion,
  );
  if (moved !== 1) throw new Error(`thread ${threadId} moved past version ${currentVersion} during append`);
  const row = sql.get<{ status: string; pending_json: string; usage_json: string }>(
    "select status, pending_json, usage_json from sessions where id = ?",
    sessionId,
  );
  if (!row) throw new Error(`session ${sessionId} vanished during append`);
  const next = projectFacts(
    {
      status: row.status as SessionStatus,
      pending: JSON.parse(row.pending_json) as PendingAction[],
      usage: JSON.parse(row.usage_json) as SessionUsage,
    },
    facts.map(decodeFact),
  );
  sql.run(
    "update sessions set status = ?, pending_json = ?, usage_json = ?, updated_at = ? where id = ?",
    next.status,
    JSON.stringify(next.pending),
    JSON.stringify(next.usage),
    now,
    sessionId,
  );
  return committed;
}
