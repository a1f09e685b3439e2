import { type RawBuilder, sql } from "kysely";
import type pg from "pg";
import type { AppendPrecondition, InputContext, InputOutcome, InputPlan } from "../../coordinator/ports.js";
import { inputOutcomeSignals } from "../../coordinator/wakeSignals.js";
import { notFound } from "../../kernel/errors.js";
import { threadMoved } from "../sql/appendFacts.js";
import type { Db } from "../sql/db.js";
import { planInputWrites } from "../sql/inputWrites.js";
import { rowToSession } from "../sql/sessionRows.js";
import {
  ACTIVE_RUN_STATES,
  checkWorkLeaseRow,
  openRequestFrom,
  openRequestQuery,
  SqlInputLedger,
  workLeaseQuery,
} from "../sql/sqlInputLedger.js";
import { type CommitNotices, carriedNotices } from "./commitNotices.js";
import {
  callInputAppend,
  type InputCallOutcome,
  inputPlanArgument,
  readForInput,
} from "./inputAppendCall.js";
import { pipelinedTransaction, rowsOf } from "./pipelinedTransaction.js";
import {
  insertEvents,
  isRetryableConflict,
  isUnreadableJson,
  sendWritesAndCommit,
} from "./postgresDispatchStore.js";

/** Reads and calls before an append that keeps meeting moved rows takes the locked path. */
const ONE_CALL_ATTEMPTS = 3;

/**
 * The input ledger's append on PostgreSQL. Usually 2 named statements in 2 round trips and no
 * transaction control (`appendInOneCall`: a read, then one call of migration 015's function, which
 * takes the locks below in the same order). With a lease precondition, or when that path keeps
 * finding rows moved, the locked path: 5 statements in 2 round trips (the general path: about 11
 * statements, as many round trips), sent in batches (`pipelinedTransaction`):
 *   [BEGIN; lock the thread, then the session row, and read both, in one SELECT … FOR UPDATE OF
 *   t, s; lock the active run(s) FOR UPDATE (the general path's query)] — decide — [write
 *   everything in one statement (data-modifying CTEs: the events, the thread version — still
 *   conditional, and the statement fails unless it moved —, the session projection merged with the
 *   plan's session patch, the run effects folded into one row change, the send receipt, and the
 *   wake NOTIFY of the signals it causes, delivered on commit); COMMIT].
 * A sessions token's precondition (share-locking its work item) goes between the two locks, as in
 * the general path, at the cost of two more round trips; so does the read of the open model
 * request, only needed when the active run is claimed.
 * Lock order thread → session → work item → run. Every transaction that locks a session row and
 * anything else (this, the fenced commit, deleteSession) holds its thread first, and the other
 * writers of a session row are single statements that hold nothing else while they wait, so the
 * session never closes a cycle; work queue transactions lock work items only; the fenced commit
 * locks thread → run → session. Those single-statement writers change other columns than the ones
 * written here, and an UPDATE writes only the columns it sets, so nothing of theirs is lost. READ
 * COMMITTED: a row locked by `FOR UPDATE` is returned at its latest committed version, so the
 * session and version read by the locking statement are those after the lock (see
 * `PostgresDispatchStore`), and each later statement takes a fresh snapshot; every write that could
 * change what `decide` read (a fact, the projection, the run) needs a lock this transaction holds.
 */
export class PostgresInputLedger extends SqlInputLedger {
  /**
   * `notices`: the wake NOTIFY of the signals the append causes travels in its writing statement
   * (`CommitNotices`); without them the append notifies nothing itself.
   */
  constructor(
    db: Db,
    private readonly pool: pg.Pool,
    private readonly notices?: CommitNotices,
  ) {
    super(db, "postgres");
  }

  override async append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
  ): Promise<InputOutcome> {
    // A lease precondition must be checked under the append's locks: the locked path does that.
    if (!precondition) {
      for (let attempt = 0; attempt < ONE_CALL_ATTEMPTS; attempt++) {
        const outcome = await this.appendInOneCall(sessionId, decide, now);
        if (outcome) return outcome;
      }
    }
    return this.appendLocked(sessionId, decide, now, precondition);
  }

  /**
   * The usual path, 2 named statements and no transaction of its own: read, decide, plan, then one
   * call of `awaken_input_append_v1` (migration 015) that locks the rows in the locked path's
   * order, checks that nothing the decision read has moved and executes the plan. Null when
   * something moved (a commit, a claim or another input came in between): decide again.
   */
  private async appendInOneCall(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
  ): Promise<InputOutcome | null> {
    const read = await readForInput(this.pool, sessionId);
    if (!read) throw notFound("session", sessionId);
    const { ctx } = read;
    const plan = decide(ctx);
    const threadId = ctx.session.threadId;
    const writes = planInputWrites(
      { sessionId, threadId, activeRun: ctx.activeRun },
      read.row,
      read.version,
      plan,
      now,
    );
    const outcome: InputOutcome = {
      committed: writes.facts.committed,
      plan,
      activeRunId: ctx.activeRun?.id ?? null,
    };
    const writesSomething =
      writes.facts.version !== null ||
      writes.session !== null ||
      writes.runs.inserts.length > 0 ||
      writes.runs.update !== null ||
      writes.receipt !== null;
    // Nothing to write: the read's snapshot is where the append took effect.
    if (!writesSomething) return outcome;
    const notice = carriedNotices(this.notices, inputOutcomeSignals(outcome));
    let answer: InputCallOutcome;
    try {
      answer = await callInputAppend(this.pool, {
        sessionId,
        threadId,
        seen: read.seen,
        plan: inputPlanArgument(writes, notice),
        now,
        channel: this.notices?.channel ?? null,
      });
    } catch (error) {
      // Rolled back as a whole: a deadlock, or a string the server's JSON reader refuses (a lone
      // surrogate, a NUL); the locked path sends values as text and decides again.
      if (isRetryableConflict(error) || isUnreadableJson(error)) return null;
      throw error;
    }
    if (answer === "missing") throw notFound("session", sessionId);
    if (answer === "moved") return null;
    if (notice) this.notices?.carried(notice.payloads);
    return outcome;
  }

  /**
   * The locked path: the precondition's, and the fallback when the one-call path kept finding
   * something moved.
   */
  private async appendLocked(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition: AppendPrecondition | undefined,
  ): Promise<InputOutcome> {
    return pipelinedTransaction(this.pool, async (tx) => {
      const lock = this.db
        .selectFrom("sessions as s")
        .innerJoin("threads as t", "t.id", "s.thread_id")
        .selectAll("s")
        .select("t.version as thread_version")
        .where("s.id", "=", sessionId)
        .where("s.deleted_at", "is", null)
        .forUpdate(["t", "s"])
        .compile();
      const runLock = this.db
        .selectFrom("runs")
        .select(["id", "state", "epoch"])
        .where("session_id", "=", sessionId)
        .where("state", "in", [...ACTIVE_RUN_STATES])
        .orderBy("created_at", "desc")
        .forUpdate()
        .compile();
      let lockedRows: unknown[] | undefined;
      let runRows: unknown[] | undefined;
      if (precondition) {
        [lockedRows] = await tx.send([lock]);
        const lease = workLeaseQuery(this.db, precondition.workId, true).compile();
        const [leaseRows] = await tx.send([lease]);
        // The general path checks the precondition before it reports a missing session; so do we.
        checkWorkLeaseRow(rowsOf(lease, leaseRows)[0], precondition, sessionId, now);
        [runRows] = await tx.send([runLock]);
      } else {
        [lockedRows, runRows] = await tx.send([lock, runLock]);
      }
      const locked = rowsOf(lock, lockedRows)[0];
      if (!locked) throw notFound("session", sessionId);
      const session = rowToSession(locked);
      const run = rowsOf(runLock, runRows)[0];
      const activeRun = run ? { id: run.id, state: run.state, epoch: Number(run.epoch) } : null;
      let openModelRequest: InputContext["openModelRequest"] = null;
      if (run?.state === "claimed") {
        const open = openRequestQuery(this.db, session.threadId).compile();
        const [openRows] = await tx.send([open]);
        openModelRequest = openRequestFrom(rowsOf(open, openRows)[0]);
      }
      const plan = decide({ session, activeRun, openModelRequest });

      const version = Number(locked.thread_version);
      const writes = planInputWrites(
        { sessionId, threadId: session.threadId, activeRun },
        locked,
        version,
        plan,
        now,
      );
      const committed = writes.facts.committed;
      const ctes: RawBuilder<unknown>[] = [];
      if (writes.facts.version) {
        ctes.push(
          sql`ev as (${insertEvents(committed)})`,
          sql`th as (${this.db
            .updateTable("threads")
            .set({ version: writes.facts.version.to })
            .where("id", "=", session.threadId)
            .where("version", "=", version)
            .returning("id")})`,
        );
      }
      if (writes.session) {
        ctes.push(
          sql`se as (${this.db.updateTable("sessions").set(writes.session).where("id", "=", sessionId)})`,
        );
      }
      // One statement must not change a row twice: the plan folds the effects on the active run into
      // one change (`planRunEffects`).
      const { inserts, update } = writes.runs;
      if (inserts.length > 0) ctes.push(sql`rs as (${this.db.insertInto("runs").values(inserts)})`);
      if (update) {
        ctes.push(sql`rc as (${this.db.updateTable("runs").set(update.set).where("id", "=", update.id)})`);
      }
      const receipt = writes.receipt;
      if (receipt) {
        const { session_id: _, ...columns } = receipt;
        ctes.push(
          sql`sr as (${this.db
            .insertInto("send_receipts")
            .values(receipt)
            .onConflict((oc) => oc.column("session_id").doUpdateSet(columns))})`,
        );
      }
      const outcome: InputOutcome = { committed, plan, activeRunId: activeRun?.id ?? null };
      // The signals the coordinator sends for this outcome, notified by the writing statement.
      const notice = ctes.length > 0 ? carriedNotices(this.notices, inputOutcomeSignals(outcome)) : null;
      await sendWritesAndCommit(
        tx,
        this.db,
        ctes,
        writes.facts.version ? "th" : null,
        () => threadMoved(session.threadId, version),
        notice,
      );
      if (notice) this.notices?.carried(notice.payloads);
      return outcome;
    });
  }
}
