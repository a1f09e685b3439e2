import { decodeFact, storedTypesOf } from "../../coordinator/factCodec.js";
import type { CommittedFact, Fact } from "../../coordinator/facts.js";
import type {
  AppendPrecondition,
  InputContext,
  InputLedger,
  InputOutcome,
  InputPlan,
  SendReceipt,
} from "../../coordinator/ports.js";
import { type WorkState, workLeaseProblem } from "../../coordinator/workLease.js";
import { notFound } from "../../kernel/errors.js";
import { planInputWrites } from "../sql/inputWrites.js";
import type { Database } from "../sql/schema.js";
import { rowToSession } from "../sql/sessionRows.js";
import { openRequestOf, type SqlInputLedger } from "../sql/sqlInputLedger.js";
import type { SyncSql, SyncWriter } from "./syncWriter.js";
import { executeInputWritesSync } from "./syncWrites.js";

/**
 * The input ledger on SQLite: `append` (every user event) runs as one synchronous transaction;
 * the rarer operations use the dialect-neutral ledger, which PostgreSQL uses for everything.
 */
export class SqliteInputLedger implements InputLedger {
  constructor(
    private readonly writer: SyncWriter,
    private readonly fallback: SqlInputLedger,
  ) {}

  append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
  ): Promise<InputOutcome> {
    return this.writer.write((sql) => {
      if (precondition) checkWorkLease(sql, sessionId, precondition, now);
      const row = sql.get<Database["sessions"]>(
        "select * from sessions where id = ? and deleted_at is null",
        sessionId,
      );
      if (!row) throw notFound("session", sessionId);
      const session = rowToSession(row);
      const run = sql.get<{ id: string; state: string; epoch: number }>(
        "select id, state, epoch from runs where session_id = ? and state in ('queued', 'claimed', 'awaiting') order by created_at desc limit 1",
        sessionId,
      );
      const openModelRequest = run?.state === "claimed" ? openRequest(sql, session.threadId) : null;
      const plan = decide({ session, activeRun: run ?? null, openModelRequest });
      const thread = sql.get<{ version: number }>(
        "select version from threads where id = ?",
        session.threadId,
      );
      const writes = planInputWrites(
        { sessionId, threadId: session.threadId, activeRun: run ?? null },
        row,
        thread?.version ?? 0,
        plan,
        now,
      );
      executeInputWritesSync(sql, sessionId, writes);
      const committed = writes.facts.committed;
      return { committed, plan, activeRunId: run?.id ?? null };
    });
  }

  lastSend(sessionId: string, requestHash: string, notBefore: number): Promise<SendReceipt | null> {
    return this.fallback.lastSend(sessionId, requestHash, notBefore);
  }

  deleteSession(sessionId: string, deletedFact: Fact, now: number): Promise<CommittedFact | null> {
    return this.fallback.deleteSession(sessionId, deletedFact, now);
  }
}

/** A sessions token's send must still hold its work lease; checked in the append's transaction. */
function checkWorkLease(
  sql: SyncSql,
  sessionId: string,
  precondition: AppendPrecondition,
  now: number,
): void {
  const row = sql.get<{ session_id: string; state: string; epoch: number; lease_expires_at: number | null }>(
    "select session_id, state, epoch, lease_expires_at from work_items where id = ?",
    precondition.workId,
  );
  const problem = workLeaseProblem(
    row && {
      sessionId: row.session_id,
      state: row.state as WorkState,
      epoch: Number(row.epoch),
      leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
    },
    precondition,
    sessionId,
    now,
  );
  if (problem) throw problem;
}

const MODEL_REQUEST_TYPES = storedTypesOf("model_request_start", "model_request_end");

function openRequest(sql: SyncSql, threadId: string): InputContext["openModelRequest"] {
  const last = sql.get<{ id: string; type: string; body_json: string }>(
    "select id, type, body_json from events where thread_id = ? and type in (?, ?) order by seq desc limit 1",
    threadId,
    ...MODEL_REQUEST_TYPES,
  );
  if (!last) return null;
  return openRequestOf(decodeFact({ id: last.id, type: last.type, body: JSON.parse(last.body_json) }));
}
