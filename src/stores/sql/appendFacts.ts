import { decodeFact } from "../../coordinator/factCodec.js";
import type { CommittedFact, Fact, SessionStatus } from "../../coordinator/facts.js";
import { projectFacts } from "../../coordinator/sessionProjection.js";
import { fromJson, type Tx, toJson } from "./db.js";
import type { Database } from "./schema.js";
import { readHead } from "./sessionHead.js";
import { meterOf, pendingJson, pendingOf, usageJson, usageOf } from "./sessionRows.js";

/** A `commits` row as a plan writes it. */
export type CommitRow = Database["commits"];

/**
 * Appends facts at the thread's current version and folds them into the session projection, in
 * the caller's transaction: the writer path of `deleteSession`. The input ledger and the fence
 * execute the same plan (`planFactAppend`) in their own statements.
 */
export async function appendFacts(
  tx: Tx,
  sessionId: string,
  threadId: string,
  facts: readonly Fact[],
  now: number,
  initial: ProjectionColumns,
): Promise<CommittedFact[]> {
  if (facts.length === 0) return [];
  const head = await readHead(tx, threadId);
  const plan = planFactAppend(sessionId, threadId, head?.version ?? 0, facts, now, head ?? initial);
  if (plan.row) await tx.insertInto("commits").values(plan.row).execute();
  return plan.committed;
}

/** The session projection a commit folds its facts into (the session row's columns of old). */
export interface ProjectionColumns {
  status: string;
  pending_json: string;
  usage_json: string;
}

/** What appending facts writes, as a pure plan every backend executes. */
export interface FactAppend {
  committed: CommittedFact[];
  /** The commit's row (facts and projection; what it was for is the caller's); null without facts. */
  row: CommitRow | null;
  /** The session's projection after the facts (`seen` itself without facts). */
  after: ProjectionColumns;
}

/**
 * The facts at consecutive versions after `currentVersion`, the row holding them and the
 * projection `seen` becomes. `seen` is the projection at `currentVersion`: commits are never
 * rewritten, so the projection a version had is the one it keeps.
 */
export function planFactAppend(
  sessionId: string,
  threadId: string,
  currentVersion: number,
  facts: readonly Fact[],
  now: number,
  seen: ProjectionColumns,
): FactAppend {
  const committed = committedFacts(sessionId, threadId, currentVersion, facts, now);
  if (committed.length === 0) {
    return {
      committed,
      row: null,
      after: { status: seen.status, pending_json: seen.pending_json, usage_json: seen.usage_json },
    };
  }
  const after = projectedColumns(seen, facts, now);
  return {
    committed,
    row: {
      thread_id: threadId,
      base_version: currentVersion,
      version: currentVersion + committed.length,
      session_id: sessionId,
      facts_json: encodeFacts(facts),
      created_at: now,
      ...after,
      op_id: null,
      run_id: null,
      payload_hash: null,
      settled: null,
      request_hash: null,
      body_hash: null,
      echo_json: null,
    },
    after,
  };
}

/** The facts as they will be stored: consecutive sequence numbers after `currentVersion`. */
export function committedFacts(
  sessionId: string,
  threadId: string,
  currentVersion: number,
  facts: readonly Fact[],
  now: number,
): CommittedFact[] {
  // Fields named one by one, not spread: a spread copy of each fact cost ~4 µs (V8's generic
  // object-clone path), on every commit.
  return facts.map((fact, i) => ({
    id: fact.id,
    type: fact.type,
    body: fact.body,
    sessionId,
    threadId,
    seq: currentVersion + i + 1,
    createdAt: now,
  }));
}

/**
 * A fact as a commit row stores it: `[id, type, body]`. An array, not an object: the keys would
 * be written again for every fact of every commit.
 */
export type StoredFact = [id: string, type: string, body: Fact["body"]];

/** A commit's `facts_json`: its facts in version order. */
export function encodeFacts(facts: readonly Fact[]): string {
  return toJson(facts.map((f): StoredFact => [f.id, f.type, f.body]));
}

/** The facts of a `facts_json`, in version order. */
export function decodeFacts(text: string): Fact[] {
  return fromJson<StoredFact[]>(text).map(([id, type, body]) => ({ id, type, body }));
}

/** The facts of a `commits` row, at their versions. */
export function rowFacts(row: {
  thread_id: string;
  base_version: number | string;
  session_id: string;
  facts_json: string;
  created_at: number | string;
}): CommittedFact[] {
  return placedFacts(row, fromJson<StoredFact[]>(row.facts_json));
}

/** A commit's facts (already parsed) at their versions. */
export function placedFacts(
  row: { thread_id: string; base_version: number | string; session_id: string; created_at: number | string },
  facts: readonly StoredFact[],
): CommittedFact[] {
  const base = Number(row.base_version);
  const createdAt = Number(row.created_at);
  return facts.map(([id, type, body], i) => ({
    id,
    type,
    body,
    sessionId: row.session_id,
    threadId: row.thread_id,
    seq: base + i + 1,
    createdAt,
  }));
}

/** The session row's projection columns after folding `facts` into the stored ones. */
export function projectedColumns(
  row: ProjectionColumns,
  facts: readonly Fact[],
  now: number,
): ProjectionColumns {
  const next = projectFacts(
    {
      status: row.status as SessionStatus,
      pending: pendingOf(row.pending_json),
      usage: usageOf(row.usage_json),
      meter: meterOf(row.usage_json),
    },
    facts.map(decodeFact),
    now,
  );
  return {
    status: next.status,
    pending_json: pendingJson(next.pending),
    usage_json: usageJson(next.usage, next.meter),
  };
}
