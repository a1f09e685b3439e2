import type pg from "pg";
import type { CommittedFact } from "../../coordinator/facts.js";
import type {
  AppendPrecondition,
  AppendReads,
  IdleSlot,
  IdleSlots,
  InputContext,
  InputOutcome,
  InputPlan,
} from "../../coordinator/ports.js";
import { inputOutcomeSignals } from "../../coordinator/wakeSignals.js";
import { notFound } from "../../kernel/errors.js";
import { rowFacts } from "../sql/appendFacts.js";
import type { Db } from "../sql/db.js";
import { type InputWrites, planInputWrites, writesSomething } from "../sql/inputWrites.js";
import { readOutcomes } from "../sql/outcomeRows.js";
import { type Head, headFrom, SESSION_AGENT_SQL } from "../sql/sessionHead.js";
import { rowToSession } from "../sql/sessionRows.js";
import { checkWorkLeaseRow, openRequest, SqlInputLedger, workLeaseQuery } from "../sql/sqlInputLedger.js";
import { readOpenWorkflows } from "../sql/workflowRows.js";
import { type HandOffPlan, planHandOff } from "./appendHandOff.js";
import { casStatement, placeholders } from "./casStatement.js";
import { type CommitNotices, carriedNotices } from "./commitNotices.js";
import type { EnvironmentConfigs } from "./environmentConfigs.js";
import type { InputRead, InputReadCache } from "./inputReadCache.js";
import { appendAcrossThreads } from "./threadInputAppend.js";

/**
 * What lets an append claim its run for an idle slot of this process (`appendHandOff`): the
 * slots, the environment configs claims saw, and the dispatch store's memory of thread heads
 * (the slot's first commit then needs no read of its own).
 */
export interface AppendHandOffs {
  slots: IdleSlots;
  environments: EnvironmentConfigs;
  rememberHead(threadId: string, head: Head & { sessionId: string }): void;
}

type WorkLeaseRow = Awaited<ReturnType<ReturnType<typeof workLeaseQuery>["executeTakeFirst"]>>;

/** What this process knows of a session: its read, and the thread's facts when it knows them all. */
type Known = { read: InputRead; history: readonly CommittedFact[] | null };

/** A decision that needs the session's child threads (`InputPlan.needsThreads`): see `appendAcrossThreads`. */
const ACROSS_THREADS = Symbol("across threads");

/** Reads and statements before an append that keeps finding what it read moved gives up. */
const APPEND_ATTEMPTS = 100;

/**
 * The input ledger's append on PostgreSQL: one plain read of what `decide` needs (the session, its
 * thread's head, its active run), the decision and its plan (`planInputWrites`), then one
 * statement (`casStatement`) that writes the plan only if what the decision read still holds:
 * the session row (share-locked, not deleted), the active run (locked, same state and epoch) or
 * none, the work lease of a sessions token's send (share-locked, as read), and the head (the
 * commit row's primary key). When it writes nothing, something moved: read and decide again.
 * The read is skipped when this process knows its answer (`InputReadCache`); the statement then
 * also checks the session row's version and that no run is active when none was known.
 * Lock order, as every writer's: session → work item → run → the commit's key.
 *
 * When this process knows the thread's whole history too and one of its worker's slots is idle,
 * the append claims the run it starts or resumes for that slot in the same statement and hands
 * the slot the activation a claim would have read (`appendHandOff`): no wake-up, no claim.
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
    private readonly reads?: InputReadCache,
    private readonly handOffs?: AppendHandOffs,
  ) {
    super(db, "postgres");
  }

  async append(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition?: AppendPrecondition,
    reads?: AppendReads,
  ): Promise<InputOutcome> {
    if (!reads?.threads) {
      for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
        const known = attempt === 0 ? (this.reads?.usable(sessionId) ?? null) : null;
        const outcome = await this.appendOnce(sessionId, decide, now, precondition, reads, known);
        if (outcome === ACROSS_THREADS) break;
        if (outcome) return outcome;
        this.reads?.forget(sessionId);
        if (attempt === APPEND_ATTEMPTS - 1)
          throw new Error(`session ${sessionId}: the append kept finding its session moved`);
      }
    }
    // The decision needs the session's child threads: the rare path that locks and reads them all.
    this.reads?.forget(sessionId);
    return appendAcrossThreads(this.db, sessionId, decide, now, precondition, reads);
  }

  private async appendOnce(
    sessionId: string,
    decide: (ctx: InputContext) => InputPlan,
    now: number,
    precondition: AppendPrecondition | undefined,
    reads: AppendReads | undefined,
    known: Known | null,
  ): Promise<InputOutcome | typeof ACROSS_THREADS | null> {
    const lease = precondition
      ? await workLeaseQuery(this.db, precondition.workId, false).executeTakeFirst()
      : undefined;
    if (precondition) checkWorkLeaseRow(lease, precondition, sessionId, now);
    const row = known?.read ?? (await this.read(sessionId));
    if (!row) throw notFound("session", sessionId);
    if (!known) this.reads?.read(row);
    const head =
      row.head_version === null
        ? null
        : headFrom({
            ...row,
            version: row.head_version,
            status: row.h_status,
            pending_json: row.h_pending,
            usage_json: row.h_usage,
          });
    const current = head ?? row;
    const session = rowToSession({
      ...row,
      agent_snapshot_json: row.agent_snapshot,
      status: current.status,
      pending_json: current.pending_json,
      usage_json: current.usage_json,
      updated_at: Math.max(Number(row.updated_at), Number(row.head_at ?? 0)),
    });
    const activeRun =
      row.run_id !== null && row.run_state !== null
        ? { id: row.run_id, state: row.run_state, epoch: Number(row.run_epoch) }
        : null;
    const openModelRequest =
      activeRun?.state === "claimed" ? await openRequest(this.db, row.thread_id) : null;
    // Read before the statement that writes: its head guard refuses the write if a commit (a
    // verdict, say) landed after this read, and the append reads and decides again.
    const outcomes = reads?.outcomes
      ? ((await readOutcomes(this.db, [row.thread_id])).get(row.thread_id) ?? [])
      : undefined;
    const openWorkflows = reads?.workflows ? await readOpenWorkflows(this.db, row.thread_id) : undefined;
    const context = {
      session,
      activeRun,
      openModelRequest,
      ...(outcomes ? { outcomes } : {}),
      ...(openWorkflows ? { openWorkflows } : {}),
    };
    // A decision on a remembered read stands only once its statement proved the read current: one
    // that writes nothing, or refuses the input, is made again on a read.
    let plan: InputPlan;
    try {
      plan = decide(context);
    } catch (error) {
      if (known) return null;
      throw error;
    }
    if (plan.needsThreads) return ACROSS_THREADS;
    const writes = planInputWrites(
      { sessionId, threadId: row.thread_id, activeRun },
      current,
      head?.version ?? 0,
      plan,
      now,
    );
    const outcome: InputOutcome = {
      committed: writes.facts.committed,
      plan,
      activeRunId: activeRun?.id ?? null,
    };
    // Nothing to write: the read is where the append took effect.
    if (!writesSomething(writes)) return known ? null : outcome;

    const handOff =
      known?.history && !precondition
        ? this.handOff({ read: known.read, history: known.history }, writes, activeRun, now)
        : null;
    if (handOff) outcome.handedOff = handOff.plan.runId;
    try {
      const written = await this.write({
        sessionId,
        row,
        known,
        writes,
        handOff: handOff?.plan ?? null,
        activeRun,
        outcome,
        lease,
        precondition,
      });
      if (!written) {
        handOff?.slot.release();
        return null;
      }
    } catch (error) {
      handOff?.slot.release();
      throw error;
    }
    if (handOff && writes.row) {
      // Before the slot can commit: its first commit then starts from a head it need not read.
      this.handOffs?.rememberHead(row.thread_id, {
        ...headFrom({ version: writes.row.version, ...writes.facts.after }),
        sessionId,
      });
      handOff.slot.deliver(handOff.plan.activation);
    }
    if (writes.session) this.reads?.forget(sessionId);
    else {
      const history = handOff
        ? handOff.plan.activation.history
        : known?.history && writes.row
          ? [...known.history, ...rowFacts(writes.row)]
          : null;
      this.reads?.appended(
        row,
        writes.row ? { version: writes.row.version, ...writes.facts.after } : null,
        handOff?.plan.runs ?? writes.runs,
        now,
        history,
      );
    }
    return outcome;
  }

  /** An idle slot and the claim of this append's run for it; null when either is missing. */
  private handOff(
    known: Known & { history: readonly CommittedFact[] },
    writes: InputWrites,
    activeRun: { id: string; state: string; epoch: number } | null,
    now: number,
  ): { slot: IdleSlot; plan: HandOffPlan } | null {
    if (!this.handOffs || !writes.row) return null;
    const config = this.handOffs.environments.get(known.read.environment_id, known.read.environment_revision);
    if (config === undefined) return null;
    const slot = this.handOffs.slots.reserve();
    if (!slot) return null;
    let plan: HandOffPlan | null;
    try {
      plan = planHandOff(
        { read: known.read, history: known.history, environmentConfigJson: config },
        writes,
        activeRun,
        slot.owner,
        slot.leaseMs,
        now,
      );
    } catch (error) {
      slot.release();
      throw error;
    }
    if (plan) return { slot, plan };
    slot.release();
    return null;
  }

  /** The append's one statement; true when it wrote. */
  private async write({
    sessionId,
    row,
    known,
    writes,
    handOff,
    activeRun,
    outcome,
    lease,
    precondition,
  }: {
    sessionId: string;
    row: InputRead;
    known: Known | null;
    writes: InputWrites;
    handOff: HandOffPlan | null;
    activeRun: { id: string; state: string; epoch: number } | null;
    outcome: InputOutcome;
    lease: WorkLeaseRow | undefined;
    precondition: AppendPrecondition | undefined;
  }): Promise<boolean> {
    const { $, values } = placeholders();
    const locks = [
      `select id from sessions where id = ${$(sessionId)} and deleted_at is null${known ? ` and xmin = ${$(known.read.s_xmin)}::xid` : ""} for share`,
    ];
    if (precondition && lease) {
      locks.push(
        `select id from work_items where id = ${$(precondition.workId)} and state = ${$(lease.state)} and epoch = ${$(Number(lease.epoch))}::bigint and lease_expires_at is not distinct from ${$(lease.lease_expires_at)}::bigint for share`,
      );
    }
    const guards: string[] = [];
    if (activeRun) {
      // A run resumed for a slot is claimed as one that never crashed: only if it has not.
      locks.push(
        `select id from runs where id = ${$(activeRun.id)} and state = ${$(activeRun.state)} and epoch = ${$(activeRun.epoch)}::bigint${handOff?.resumesCrashFree ? " and crash_count = 0" : ""} for update`,
      );
    } else if (!writes.row || known) {
      // With facts, a run started meanwhile came with a commit that took this one's version; a
      // remembered read may predate that commit's read, so it checks.
      guards.push(
        `not exists (select 1 from runs where session_id = ${$(sessionId)} and thread_id = ${$(row.thread_id)} and state in ('queued', 'claimed', 'awaiting'))`,
      );
    }
    if (writes.row && writes.row.base_version > 0) {
      const base = $(writes.row.base_version);
      guards.push(
        `(select version from commits where thread_id = ${$(row.thread_id)} and base_version < ${base}::bigint order by base_version desc limit 1) = ${base}::bigint`,
      );
    }
    // Resources added since the session was known would change what the slot is told.
    if (handOff?.checkNoResources)
      guards.push(`not exists (select 1 from session_resources where session_id = ${$(sessionId)})`);
    const notice = carriedNotices(this.notices, inputOutcomeSignals(outcome));
    const runs = handOff?.runs ?? writes.runs;
    const statement = casStatement(
      {
        locks,
        guards,
        row: writes.row,
        operation: null,
        runInserts: runs.inserts,
        runUpdate: runs.update,
        session: writes.session ? { id: sessionId, set: writes.session } : null,
        notice,
      },
      $,
      values,
    );
    const { rows: answer } = await this.pool.query<{ ok: number }>(statement);
    if (answer[0]?.ok !== 1) return false;
    if (notice) this.notices?.carried(notice.payloads);
    return true;
  }

  private async read(sessionId: string): Promise<InputRead | null> {
    const { rows } = await this.pool.query<InputRead>({
      name: READ.name,
      text: READ.sql,
      values: [sessionId],
    });
    return rows[0] ?? null;
  }
}

/**
 * $1 session id. One snapshot: the session row, its thread's head and the
 * newest active run of that thread (a child thread's run is its own).
 */
const READ = {
  name: "awaken_input_read_v6",
  sql: `select s.*, s.xmin::text as s_xmin, ${SESSION_AGENT_SQL} as agent_snapshot, h.version as head_version, h.status as h_status, h.pending_json as h_pending,
      h.usage_json as h_usage, h.created_at as head_at,
      r.id as run_id, r.state as run_state, r.epoch as run_epoch,
      exists (select 1 from session_resources sr where sr.session_id = s.id) as has_resources
    from sessions s
    left join lateral (select version, status, pending_json, usage_json, created_at from commits
        where thread_id = s.thread_id order by base_version desc limit 1) h on true
    left join lateral (select id, state, epoch from runs
        where session_id = s.id and thread_id = s.thread_id and state in ('queued', 'claimed', 'awaiting') order by created_at desc limit 1) r on true
    where s.id = $1 and s.deleted_at is null`,
} as const;
