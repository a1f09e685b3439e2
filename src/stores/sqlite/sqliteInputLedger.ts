import type {
  AppendPrecondition,
  AppendReads,
  InputContext,
  InputOutcome,
  InputPlan,
} from "../../coordinator/ports.js";
import { type WorkState, workLeaseProblem } from "../../coordinator/workLease.js";
import { notFound } from "../../kernel/errors.js";
import { type ChildThreadRead, childThreadState } from "../sql/childThreadWrites.js";
import type { Db } from "../sql/db.js";
import { planInputWrites } from "../sql/inputWrites.js";
import type { Database } from "../sql/schema.js";
import { SESSION_AGENT_SQL } from "../sql/sessionHead.js";
import { rowToSession } from "../sql/sessionRows.js";
import { SqlInputLedger } from "../sql/sqlInputLedger.js";
import { headSync, openRequestSync, readOpenWorkflowsSync, readOutcomesSync } from "./syncReads.js";
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
      // The primary thread's run: a child's run is its own (read with the children, below).
      const run = activeRunSync(sql, sessionId, session.threadId);
      const openModelRequest = run?.state === "claimed" ? openRequestSync(sql, session.threadId) : null;
      const ctx: InputContext = {
        session,
        activeRun: run,
        openModelRequest,
        ...(reads?.outcomes ? { outcomes: readOutcomesSync(sql, session.threadId) } : {}),
        ...(reads?.workflows ? { openWorkflows: readOpenWorkflowsSync(sql, session.threadId) } : {}),
      };
      let children: Map<string, ChildThreadRead> | null = reads?.threads
        ? childThreadsSync(sql, sessionId)
        : null;
      let plan = decide(children ? { ...ctx, threads: [...children.values()].map(childThreadState) } : ctx);
      if (plan.needsThreads && !children) {
        children = childThreadsSync(sql, sessionId);
        plan = decide({ ...ctx, threads: [...children.values()].map(childThreadState) });
      }
      if (plan.needsThreads) throw new Error("a decision asked for the child threads it was given");
      const writes = planInputWrites(
        { sessionId, threadId: session.threadId, activeRun: run },
        current,
        head?.version ?? 0,
        plan,
        now,
        children ?? new Map(),
      );
      executeInputWritesSync(sql, sessionId, writes);
      const committed = writes.facts.committed;
      return {
        committed,
        plan,
        activeRunId: run?.id ?? null,
        ...(writes.threads && writes.threads.length > 0
          ? {
              threads: writes.threads.map((t) => ({
                threadId: t.threadId,
                committed: t.facts.committed,
                effects: plan.threads?.find((p) => p.threadId === t.threadId)?.effects ?? [],
                activeRunId: children?.get(t.threadId)?.run?.id ?? null,
              })),
            }
          : {}),
      };
    });
  }
}

/** A thread's active run, through the session's index of active runs. */
function activeRunSync(
  sql: SyncSql,
  sessionId: string,
  threadId: string,
): { id: string; state: string; epoch: number } | null {
  return (
    sql.get<{ id: string; state: string; epoch: number }>(
      "select id, state, epoch from runs where session_id = ? and thread_id = ? and state in ('queued', 'claimed', 'awaiting') order by created_at desc limit 1",
      sessionId,
      threadId,
    ) ?? null
  );
}

/** The session's child threads, each with its head, its active run and the request that run left open. */
function childThreadsSync(sql: SyncSql, sessionId: string): Map<string, ChildThreadRead> {
  const rows = sql.all<{ id: string; agent_name: string | null; archived_at: number | null }>(
    "select id, agent_name, archived_at from threads where session_id = ? and parent_thread_id is not null order by created_at, id",
    sessionId,
  );
  return new Map(
    rows.map((row) => {
      const run = activeRunSync(sql, sessionId, row.id);
      return [
        row.id,
        {
          ...row,
          head: headSync(sql, row.id),
          run,
          openModelRequest: run?.state === "claimed" ? openRequestSync(sql, row.id) : null,
        },
      ];
    }),
  );
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
