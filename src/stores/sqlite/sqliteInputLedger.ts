import type {
  AppendPrecondition,
  AppendReads,
  InputContext,
  InputOutcome,
  InputPlan,
} from "../../coordinator/ports.js";
import { type WorkState, workLeaseProblem } from "../../coordinator/workLease.js";
import { notFound } from "../../kernel/errors.js";
import type { Db } from "../sql/db.js";
import { planInputWrites } from "../sql/inputWrites.js";
import type { Database } from "../sql/schema.js";
import { SESSION_AGENT_SQL } from "../sql/sessionHead.js";
import { rowToSession } from "../sql/sessionRows.js";
import { SqlInputLedger } from "../sql/sqlInputLedger.js";
import { headSync, openRequestSync, readOutcomesSync } from "./syncReads.js";
import type { SyncSql, SyncWriter } from "./syncWriter.js";
import { executeInputWritesSync } from "./syncWrites.js";

/**
 * The input ledger on SQLite: `append` (every user event) runs as one synchronous transaction
 * that reads what `decide` needs, decides and executes the plan; the rarer operations are the
 * dialect-neutral ledger's.
 */
export class SqliteInputLedger extends SqlInputLedger {
  constructor(
    db: Db,
    private readonly writer: SyncWriter,
  ) {
    super(db, "sqlite");
  }

  append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
    reads?: AppendReads,
  ): Promise<InputOutcome> {
    return this.writer.write((sql) => {
      if (precondition) checkWorkLease(sql, sessionId, precondition, now);
      const read = sql.get<Database["sessions"] & { agent_snapshot: string }>(
        `select s.*, ${SESSION_AGENT_SQL} as agent_snapshot from sessions s where s.id = ? and s.deleted_at is null`,
        sessionId,
      );
      if (!read) throw notFound("session", sessionId);
      const row = { ...read, agent_snapshot_json: read.agent_snapshot };
      const head = headSync(sql, row.thread_id);
      const current = head ?? row;
      const session = rowToSession({
        ...row,
        status: current.status,
        pending_json: current.pending_json,
        usage_json: current.usage_json,
      });
      const run = sql.get<{ id: string; state: string; epoch: number }>(
        "select id, state, epoch from runs where session_id = ? and state in ('queued', 'claimed', 'awaiting') order by created_at desc limit 1",
        sessionId,
      );
      const openModelRequest = run?.state === "claimed" ? openRequestSync(sql, session.threadId) : null;
      const plan = decide({
        session,
        activeRun: run ?? null,
        openModelRequest,
        ...(reads?.outcomes ? { outcomes: readOutcomesSync(sql, session.threadId) } : {}),
      });
      const writes = planInputWrites(
        { sessionId, threadId: session.threadId, activeRun: run ?? null },
        current,
        head?.version ?? 0,
        plan,
        now,
      );
      executeInputWritesSync(sql, sessionId, writes);
      const committed = writes.facts.committed;
      return { committed, plan, activeRunId: run?.id ?? null };
    });
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
