import { sql } from "kysely";
import type {
  AppendPrecondition,
  AppendReads,
  InputContext,
  InputOutcome,
  InputPlan,
} from "../../coordinator/ports.js";
import { notFound } from "../../kernel/errors.js";
import type { CommitRow } from "../sql/appendFacts.js";
import { type ChildThreadRead, childThreadState } from "../sql/childThreadWrites.js";
import { begin, type Db, type Tx } from "../sql/db.js";
import { type InputWrites, planInputWrites } from "../sql/inputWrites.js";
import { readOutcomes } from "../sql/outcomeRows.js";
import type { RunUpdate } from "../sql/runWrites.js";
import type { Database } from "../sql/schema.js";
import { readHead, SESSION_AGENT_SQL } from "../sql/sessionHead.js";
import { rowToSession } from "../sql/sessionRows.js";
import { checkWorkLeaseRow, openRequest, workLeaseQuery } from "../sql/sqlInputLedger.js";
import { readOpenWorkflows } from "../sql/workflowRows.js";

type ActiveRun = { id: string; state: string; epoch: number };

/**
 * An append that writes on a session's child threads too (an interrupt while children work, an
 * answer routed to a child), on PostgreSQL: one READ COMMITTED transaction that locks the session
 * row (FOR UPDATE: no other append decides meanwhile) and every active run of the session, the
 * primary's and the children's (a worker's commit locks its run first, so none lands on a thread
 * this append reads; a child's answer on the primary is made under its run's lock too), then reads
 * the heads, decides and writes the plan. Lock order as every writer's: session → work item → runs
 * → the commits' keys. Rare (only sessions with children), so it is not the one-statement path.
 */
export async function appendAcrossThreads(
  db: Db,
  sessionId: string,
  decide: (ctx: InputContext) => InputPlan,
  now: number,
  precondition: AppendPrecondition | undefined,
  reads: AppendReads | undefined,
): Promise<InputOutcome> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      return await appendOnce(db, sessionId, decide, now, precondition, reads);
    } catch (error) {
      if (!(error instanceof Moved)) throw error;
    }
  }
  throw new Error(`session ${sessionId}: the append across threads kept finding a thread moved`);
}

/**
 * A commit row that did not go in: a thread's head moved after it was read, which the locks should
 * prevent. The transaction is rolled back and the append reads and decides again.
 */
class Moved extends Error {}
const ATTEMPTS = 5;

async function appendOnce(
  db: Db,
  sessionId: string,
  decide: (ctx: InputContext) => InputPlan,
  now: number,
  precondition: AppendPrecondition | undefined,
  reads: AppendReads | undefined,
): Promise<InputOutcome> {
  return begin(db, "postgres").execute(async (tx) => {
    const read = await sql<Database["sessions"] & { agent_snapshot: string }>`select s.*, ${sql.raw(
      SESSION_AGENT_SQL,
    )} as agent_snapshot from sessions s where s.id = ${sessionId} and s.deleted_at is null for update`
      .execute(tx)
      .then((r) => r.rows[0]);
    if (!read) throw notFound("session", sessionId);
    if (precondition) {
      const lease = await workLeaseQuery(tx, precondition.workId, true).executeTakeFirst();
      checkWorkLeaseRow(lease, precondition, sessionId, now);
    }
    await lockActiveRuns(tx, sessionId);
    const threadId = read.thread_id;
    const head = await readHead(tx, threadId);
    const current = head ?? read;
    const session = rowToSession({
      ...read,
      agent_snapshot_json: read.agent_snapshot,
      status: current.status,
      pending_json: current.pending_json,
      usage_json: current.usage_json,
    });
    const activeRun = await activeRunOf(tx, sessionId, threadId);
    const ctx: InputContext = {
      session,
      activeRun,
      openModelRequest: activeRun?.state === "claimed" ? await openRequest(tx, threadId) : null,
      ...(reads?.outcomes ? { outcomes: (await readOutcomes(tx, [threadId])).get(threadId) ?? [] } : {}),
      ...(reads?.workflows ? { openWorkflows: await readOpenWorkflows(tx, threadId) } : {}),
    };
    const children = await childThreads(tx, sessionId);
    const plan = decide({ ...ctx, threads: [...children.values()].map(childThreadState) });
    if (plan.needsThreads) throw new Error("a decision asked for the child threads it was given");
    const writes = planInputWrites(
      { sessionId, threadId, activeRun },
      current,
      head?.version ?? 0,
      plan,
      now,
      children,
    );
    await execute(tx, sessionId, writes);
    return {
      committed: writes.facts.committed,
      plan,
      activeRunId: activeRun?.id ?? null,
      ...(writes.threads && writes.threads.length > 0
        ? {
            threads: writes.threads.map((t) => ({
              threadId: t.threadId,
              committed: t.facts.committed,
              effects: plan.threads?.find((p) => p.threadId === t.threadId)?.effects ?? [],
              activeRunId: children.get(t.threadId)?.run?.id ?? null,
            })),
          }
        : {}),
    };
  });
}

/**
 * Locks every active run of the session. A run that a commit (a spawn) inserted while this waited
 * on its parent's run is not in the first statement's snapshot: locking again until no new run
 * shows up covers it (no spawn can begin once the parent's run is locked here).
 */
async function lockActiveRuns(tx: Tx, sessionId: string): Promise<void> {
  const locked = new Set<string>();
  for (;;) {
    const rows = await tx
      .selectFrom("runs")
      .select("id")
      .where("session_id", "=", sessionId)
      .where(sql<boolean>`state in ('queued', 'claimed', 'awaiting')`)
      .orderBy("id")
      .forUpdate()
      .execute();
    const fresh = rows.filter((row) => !locked.has(row.id));
    if (fresh.length === 0 && locked.size > 0) return;
    for (const row of fresh) locked.add(row.id);
    if (rows.length === 0) return;
  }
}

async function activeRunOf(tx: Tx, sessionId: string, threadId: string): Promise<ActiveRun | null> {
  const run = await tx
    .selectFrom("runs")
    .select(["id", "state", "epoch"])
    .where("session_id", "=", sessionId)
    .where("thread_id", "=", threadId)
    .where(sql<boolean>`state in ('queued', 'claimed', 'awaiting')`)
    .orderBy("created_at", "desc")
    .limit(1)
    .executeTakeFirst();
  return run ? { id: run.id, state: run.state, epoch: Number(run.epoch) } : null;
}

async function childThreads(tx: Tx, sessionId: string): Promise<Map<string, ChildThreadRead>> {
  const rows = await tx
    .selectFrom("threads")
    .select(["id", "agent_name", "archived_at"])
    .where("session_id", "=", sessionId)
    .where("parent_thread_id", "is not", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
  const children = new Map<string, ChildThreadRead>();
  for (const row of rows) {
    const run = await activeRunOf(tx, sessionId, row.id);
    children.set(row.id, {
      ...row,
      head: await readHead(tx, row.id),
      run,
      openModelRequest: run?.state === "claimed" ? await openRequest(tx, row.id) : null,
    });
  }
  return children;
}

/** The plan's rows, as they are: every thread they extend and every run they change is locked. */
async function execute(tx: Tx, sessionId: string, writes: InputWrites): Promise<void> {
  if (writes.row) await insertCommit(tx, writes.row);
  if (writes.session)
    await tx.updateTable("sessions").set(writes.session).where("id", "=", sessionId).execute();
  for (const run of writes.runs.inserts) await tx.insertInto("runs").values(run).execute();
  if (writes.runs.update) await updateRun(tx, writes.runs.update);
  for (const child of writes.threads ?? []) {
    if (child.row) await insertCommit(tx, child.row);
    if (child.run) await updateRun(tx, child.run);
  }
}

async function insertCommit(tx: Tx, row: CommitRow): Promise<void> {
  const inserted = await tx
    .insertInto("commits")
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) throw new Moved();
}

async function updateRun(tx: Tx, update: RunUpdate): Promise<void> {
  let query = tx.updateTable("runs").set(update.set).where("id", "=", update.id);
  if (update.onlyIfCrashed) query = query.where("crash_count", "<>", 0);
  if (update.ifEpoch !== null) query = query.where("epoch", "=", update.ifEpoch);
  await query.execute();
}
