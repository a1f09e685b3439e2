import type {
  CommittedFact,
  Fact,
  PendingAction,
  SessionStatus,
  SessionUsage,
} from "../../coordinator/facts.js";
import { projectFacts } from "../../coordinator/sessionProjection.js";
import { fromJson, type Tx, toJson } from "./db.js";

/**
 * Appends facts at the thread's current version and folds them into the session projection, all in
 * the caller's transaction. The single writer path for both coordinator inputs and fenced commits.
 */
export async function appendFacts(
  tx: Tx,
  sessionId: string,
  threadId: string,
  currentVersion: number,
  facts: readonly Fact[],
  now: number,
): Promise<CommittedFact[]> {
  if (facts.length === 0) return [];
  const committed: CommittedFact[] = facts.map((fact, i) => ({
    ...fact,
    sessionId,
    threadId,
    seq: currentVersion + i + 1,
    createdAt: now,
  }));
  await tx
    .insertInto("events")
    .values(
      committed.map((f) => ({
        thread_id: threadId,
        seq: f.seq,
        id: f.id,
        session_id: sessionId,
        type: f.type,
        body_json: toJson(f.body),
        created_at: now,
      })),
    )
    .execute();
  const newVersion = currentVersion + facts.length;
  const updated = await tx
    .updateTable("threads")
    .set({ version: newVersion })
    .where("id", "=", threadId)
    .where("version", "=", currentVersion)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) {
    // The version check is repeated in the UPDATE so that a backend with weaker isolation still
    // cannot write two facts at one version.
    throw new Error(`thread ${threadId} moved past version ${currentVersion} during append`);
  }
  const row = await tx
    .selectFrom("sessions")
    .select(["status", "pending_json", "usage_json"])
    .where("id", "=", sessionId)
    .executeTakeFirstOrThrow();
  const next = projectFacts(
    {
      status: row.status as SessionStatus,
      pending: fromJson<PendingAction[]>(row.pending_json),
      usage: fromJson<SessionUsage>(row.usage_json),
    },
    facts,
  );
  await tx
    .updateTable("sessions")
    .set({
      status: next.status,
      pending_json: toJson(next.pending),
      usage_json: toJson(next.usage),
      updated_at: now,
    })
    .where("id", "=", sessionId)
    .execute();
  return committed;
}

export function rowToFact(row: {
  thread_id: string;
  seq: number;
  id: string;
  session_id: string;
  type: string;
  body_json: string;
  created_at: number;
}): CommittedFact {
  return {
    id: row.id,
    type: row.type,
    body: fromJson(row.body_json),
    sessionId: row.session_id,
    threadId: row.thread_id,
    seq: Number(row.seq),
    createdAt: Number(row.created_at),
  };
}
