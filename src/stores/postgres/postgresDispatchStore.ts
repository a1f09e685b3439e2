import { type RawBuilder, sql } from "kysely";
import type pg from "pg";
import { decideCommit, type FenceState } from "../../coordinator/commitFence.js";
import {
  type CommitOperation,
  type CommitReceipt,
  type CommitResult,
  payloadHash,
} from "../../coordinator/commitOperation.js";
import type { CommittedFact } from "../../coordinator/facts.js";
import type { Activation } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import { activationFromRows } from "../sql/activationRows.js";
import { rowToFact, threadMoved } from "../sql/appendFacts.js";
import { type CommitWrites, planCommitWrites } from "../sql/commitWrites.js";
import { type Db, fromJson, toJson } from "../sql/db.js";
import type { RunUpdate } from "../sql/runWrites.js";
import type { Database } from "../sql/schema.js";
import { SqlDispatchStore } from "../sql/sqlDispatchStore.js";
import { type CarriedNotices, type CommitNotices, carriedNotices } from "./commitNotices.js";
import { type PipelinedTransaction, pipelinedTransaction, placeholders } from "./pipelinedTransaction.js";
import { TurnBatcher } from "./turnBatcher.js";

/**
 * Claims and the commit fence on PostgreSQL in as few round trips as the fence allows. Same rows,
 * same locks, same lock order (thread, then run, then session) and the same pure decision
 * (`decideCommit`) as `SqlDispatchStore`, whose code this falls back to for the rare paths.
 * Statements travel in batches (`pipelinedTransaction`): one socket write and one round trip per
 * batch, executed by the server in order exactly as if sent one by one. They are prepared once per
 * connection (parsed and planned once), which is why the hot ones are fixed texts written out here.
 *
 * Transactions are READ COMMITTED. Two facts of that level carry the reasoning:
 * 1. `SELECT … FOR UPDATE` returns every row it locks at its latest committed version: when a row
 *    changed after the statement's snapshot, PostgreSQL waits for the writer, locks the new version
 *    and re-evaluates the query for it (EvalPlanQual). So the columns of LOCKED rows are as fresh as
 *    a read made after the lock — but the columns of rows the statement did not lock still come
 *    from the snapshot taken before it waited.
 * 2. `FOR UPDATE OF a, b, c` locks each result row's tables in the order listed (the rowmarks are
 *    kept in clause order and taken one after the other), so one statement keeps the lock order.
 *
 * Commit, usual case: 1 statement in 1 round trip, `awaken_commit_append_v3` (migrations 006, 012), which
 * locks the same rows in the same order, checks in SQL what `decideCommit` checks for an append and
 * writes everything, or writes nothing and reports why. Appends made in the same event-loop turn
 * share that call and its transaction (`TurnBatcher`: group commit, one level up; from 8 appends
 * on, two calls). It needs the session projection the new
 * facts are projected onto before it is sent, so the store remembers, per thread, the projection
 * its last claim or commit saw; the function refuses (`projection_moved`) when the row holds
 * anything else, and the call is retried once with the columns it reports. A store that remembers
 * nothing, and every outcome other than an append, takes the locked path below.
 *
 * Commit, locked path: 4 statements in 2 round trips (the general path: 11–12 statements):
 *   [BEGIN; lock and read the thread, the run and the session row, and look up the operation id,
 *   in one SELECT … FOR UPDATE OF t, r, s] — decide — [write everything in one statement
 *   (data-modifying CTEs: the events, the thread version — still conditional on the expected
 *   version, and the statement fails unless it moved —, the session projection, the run, the
 *   receipt); COMMIT].
 * The operation row is not locked (it may not exist), so by (1) it is read from the pre-lock
 * snapshot. That is safe because only `append` is decided on it without another look:
 *   - any other decision (duplicate, stale claim, version or operation conflict) is made again
 *     with the operation row re-read after the locks, i.e. exactly as the general path decides;
 *   - an `append` decided on a snapshot that missed a just-committed row with the same operation id
 *     runs into the row's primary key when it stores the receipt; the transaction rolls back, and
 *     the general path decides again from scratch (then it sees the row).
 *
 * Claim: 3 statements in 1 round trip (general path: 7): [BEGIN; one statement that picks the
 * oldest claimable run `FOR UPDATE SKIP LOCKED`, advances its epoch, lease and crash count (SET
 * reads the locked version), and returns it (with when it became claimable, for the claim-wait
 * metric: the picked row is locked, so those columns are its latest) with the session's pinned agent and environment
 * revision and the thread's history; COMMIT]. The general path fails (and rolls back) a claim whose
 * session or environment revision is missing; here the statement itself fails then, so the COMMIT
 * behind it rolls back, and the general path runs to fail the same way. The history is read at that
 * statement's snapshot instead of a later one: still a committed prefix of the thread, and input
 * that lands after it is caught by the first commit's version check, as input after any claim is.
 */
export class PostgresDispatchStore extends SqlDispatchStore {
  /** Per thread, the session projection this store last saw committed (see `appendInOneCall`). */
  private readonly projections = new Map<string, SeenProjection>();
  /** Appends of one event-loop turn, sent as one call (see `appendInOneCall`). */
  private readonly appends = new TurnBatcher<AppendRequest, AppendAnswer>((batch) => this.appendBatch(batch));

  /**
   * `notices`: the wake NOTIFY a written append causes travels in the committing statement
   * (`CommitNotices`); without them the commit notifies nothing itself.
   */
  constructor(
    db: Db,
    private readonly pool: pg.Pool,
    clock: Clock,
    private readonly notices?: CommitNotices,
  ) {
    super(db, clock, "postgres");
  }

  override async claim(owner: string, leaseMs: number, prefer?: string): Promise<Activation | null> {
    try {
      return await this.claimCommitted(owner, leaseMs, prefer);
    } catch (error) {
      // The claimed run's session or pinned environment revision is missing: the statement failed
      // on purpose, so nothing was claimed. The general path claims the run again and fails the
      // way it always has.
      if (!isDivisionByZero(error)) throw error;
    }
    return super.claim(owner, leaseMs);
  }

  /**
   * One autocommit statement, its own transaction (READ COMMITTED: `openPostgres` makes it every
   * connection's default): no BEGIN or COMMIT around it, as for the commit function.
   */
  private async claimCommitted(owner: string, leaseMs: number, prefer?: string): Promise<Activation | null> {
    const now = this.clock.now();
    const leaseExpiresAt = now + leaseMs;
    const { rows } = await this.pool.query<ClaimRow>({
      name: CLAIM.name,
      text: CLAIM.sql,
      values: [owner, leaseExpiresAt, now, prefer ?? null, now - PREFERENCE_WINDOW_MS],
    });
    const row = rows[0];
    if (!row) return null;
    if (
      row.status === null ||
      row.pending_json === null ||
      row.usage_json === null ||
      row.workspace_id === null ||
      row.agent_snapshot_json === null ||
      row.environment_id === null ||
      row.environment_revision === null ||
      row.metadata_json === null ||
      row.config_json === null
    ) {
      throw new Error(`unreachable: run ${row.id} was claimed without its session or environment`);
    }
    this.remember(row.thread_id, {
      session_id: row.session_id,
      status: row.status,
      pending_json: row.pending_json,
      usage_json: row.usage_json,
    });
    return activationFromRows(
      {
        runId: row.id,
        sessionId: row.session_id,
        threadId: row.thread_id,
        owner,
        epoch: Number(row.epoch),
        leaseExpiresAt,
        crashCount: Number(row.crash_count),
        claimableSince: Number(row.claimable_since),
        reclaimed: row.reclaimed,
        traceContext: row.trace_context,
      },
      {
        workspace_id: row.workspace_id,
        agent_snapshot_json: row.agent_snapshot_json,
        environment_id: row.environment_id,
        environment_revision: row.environment_revision,
        metadata_json: row.metadata_json,
        data_subject: row.data_subject,
      },
      row.config_json,
      row.history.map(rowToFact),
    );
  }

  override async commit(op: CommitOperation): Promise<CommitResult> {
    const hash = payloadHash(op);
    try {
      const appended = await this.appendInOneCall(op, hash);
      if (appended) return appended;
      const result = await pipelinedTransaction(this.pool, (tx) => this.commitLocked(tx, op, hash));
      if (result) return result;
    } catch (error) {
      // The primary key of the receipt (or of an event id) was taken by a transaction the
      // snapshot did not see; nothing of this attempt was kept. Decide again the general way.
      if (!isUniqueViolation(error)) throw error;
    }
    this.projections.delete(op.threadId);
    return super.commit(op);
  }

  /**
   * The plain append in one round trip (`awaken_commit_append_v3`, migrations 006, 007 and 012), when this store
   * remembers the session projection the thread's last commit or claim left. Appends made in the
   * same event-loop turn travel together in one call and one transaction (`TurnBatcher`). The
   * function writes an append only if everything is as this side assumed (claim, version, unused
   * operation id, projection); a projection moved by another writer (input appended meanwhile) is
   * retried once with the columns it reports; anything else returns null and the locked path
   * decides.
   */
  private async appendInOneCall(op: CommitOperation, hash: string): Promise<CommitResult | null> {
    for (let attempt = 0; attempt < 2; attempt++) {
      if (!this.projections.has(op.threadId)) return null;
      const answer = await this.appends.submit({ op, hash });
      if (answer.kind === "appended") return answer.result;
      if (answer.kind === "failed") throw answer.error;
      if (answer.kind === "decide") return null;
    }
    return null;
  }

  /** One call of `awaken_commit_append_v3` for a batch of appends; answers each, in order. */
  private async appendBatch(requests: AppendRequest[]): Promise<AppendAnswer[]> {
    const answers: AppendAnswer[] = requests.map(() => ({ kind: "decide" }));
    const now = this.clock.now();
    // Sorted by thread: every batch locks threads in one global order (see migration 006).
    const order = requests
      .map((_, i) => i)
      .sort((x, y) => compare(requests[x]!.op.threadId, requests[y]!.op.threadId));
    const sent: { index: number; plan: CommitWrites; seen: SeenProjection }[] = [];
    for (const index of order) {
      const { op } = requests[index]!;
      const seen = this.projections.get(op.threadId);
      if (!seen) continue;
      try {
        sent.push({ index, plan: planCommitWrites(op, requests[index]!.hash, seen, now), seen });
      } catch (error) {
        answers[index] = { kind: "failed", error };
      }
    }
    if (sent.length === 0) return answers;
    // The batch travels as two JSON documents, read as jsonb (parsed once): the appends, and their
    // facts tagged with the append's 1-based index. Texts that are stored as they are (bodies,
    // receipts, projection columns) travel as JSON strings of JSON.stringify's output, so the
    // server stores exactly what the locked path would (see migration 006).
    // Each append's wake notification (see `CommitNotices`): the function sends it when it writes it.
    const notify = sent.map((entry) =>
      threadNotice(this.notices, requests[entry.index]!.op, entry.plan.receipt),
    );
    const appends = sent.map((entry, k) => {
      const { op, hash } = requests[entry.index]!;
      return {
        i: k + 1,
        thread: op.threadId,
        run: op.runId,
        op: op.opId,
        hash,
        receipt: entry.plan.operation.receipt_json,
        owner: op.owner,
        epoch: op.epoch,
        expected: op.expectedVersion,
        n: entry.plan.facts.committed.length,
        seen_status: entry.seen.status,
        seen_pending: entry.seen.pending_json,
        seen_usage: entry.seen.usage_json,
        status: entry.plan.facts.after.status,
        pending: entry.plan.facts.after.pending_json,
        usage: entry.plan.facts.after.usage_json,
        ...functionRunStep(entry.plan.run),
        notify: notify[k]?.payloads[0] ?? null,
      };
    });
    // The plan's event rows already hold each body's JSON text: reuse it rather than encode again.
    const facts = sent.flatMap((entry, k) =>
      entry.plan.facts.events.map((event) => ({
        a: k + 1,
        seq: event.seq,
        id: event.id,
        type: event.type,
        body: event.body_json,
      })),
    );
    let rows: AppendRow[];
    try {
      ({ rows } = await this.pool.query<AppendRow>({
        ...APPEND,
        values: [
          now,
          appends.length,
          JSON.stringify(appends),
          JSON.stringify(facts),
          this.notices?.channel ?? null,
        ],
      }));
    } catch (error) {
      // The batch rolled back as a whole: a key taken by a concurrent commit the checks could not
      // see (a same-id retry), a deadlock or serialization failure, or a string the server's JSON
      // reader refuses to decode (a lone UTF-16 surrogate or a NUL in a raw id of the batch).
      // Each append decides alone, on the locked path, which sends its values as text.
      if (isUniqueViolation(error) || isRetryableConflict(error) || isUnreadableJson(error)) return answers;
      throw error;
    }
    const notified: string[] = [];
    for (const row of rows) {
      const entry = sent[row.o_index - 1];
      if (!entry) continue;
      const threadId = requests[entry.index]!.op.threadId;
      if (row.o_outcome === "appended") {
        notified.push(...(notify[row.o_index - 1]?.payloads ?? []));
        this.remember(threadId, { ...entry.plan.facts.after, session_id: entry.seen.session_id });
        answers[entry.index] = {
          kind: "appended",
          result: { ok: true, receipt: entry.plan.receipt, duplicate: false },
        };
      } else if (row.o_outcome === "projection_moved" && row.o_status !== null) {
        this.remember(threadId, {
          session_id: entry.seen.session_id,
          status: row.o_status,
          pending_json: row.o_pending_json ?? "[]",
          usage_json: row.o_usage_json ?? "{}",
        });
        answers[entry.index] = { kind: "projection_moved" };
      }
    }
    if (notified.length > 0) this.notices?.carried(notified);
    return answers;
  }

  /** Remembers the projection a thread's session has after a commit or claim (bounded, LRU). */
  private remember(threadId: string, seen: SeenProjection): void {
    this.projections.delete(threadId);
    this.projections.set(threadId, seen);
    if (this.projections.size > PROJECTION_CACHE_SIZE) {
      const oldest = this.projections.keys().next().value;
      if (oldest !== undefined) this.projections.delete(oldest);
    }
  }

  /** The locked path; null when a row the fence reads is missing (the general path decides). */
  private async commitLocked(
    tx: PipelinedTransaction,
    op: CommitOperation,
    hash: string,
  ): Promise<CommitResult | null> {
    const [lockedRows] = await tx.send([{ ...COMMIT_LOCK, parameters: [op.runId, op.opId, op.threadId] }]);
    const locked = (lockedRows as CommitLockRow[] | undefined)?.[0];
    if (!locked) return null;
    // Read after the locks were granted, so a lease that lapsed while waiting counts as lapsed.
    const now = this.clock.now();
    const state: FenceState = {
      existing:
        locked.payload_hash !== null && locked.receipt_json !== null
          ? { payloadHash: locked.payload_hash, receipt: fromJson<CommitReceipt>(locked.receipt_json) }
          : null,
      run: {
        state: locked.state,
        owner: locked.owner,
        epoch: Number(locked.epoch),
        leaseExpiresAt: locked.lease_expires_at === null ? null : Number(locked.lease_expires_at),
      },
      threadVersion: Number(locked.version),
      now,
    };
    let decision = decideCommit(op, hash, state);
    if (decision.kind !== "append") {
      // Not an append: decide on the operation row as it is now, after the locks (see the class).
      const [rows] = await tx.send([{ ...OPERATION, parameters: [op.opId] }]);
      const existing = (rows as { payload_hash: string; receipt_json: string }[] | undefined)?.[0];
      decision = decideCommit(op, hash, {
        ...state,
        existing: existing
          ? { payloadHash: existing.payload_hash, receipt: fromJson<CommitReceipt>(existing.receipt_json) }
          : null,
      });
    }
    if (decision.kind === "duplicate") return { ok: true, receipt: decision.receipt, duplicate: true };
    if (decision.kind === "reject") return { ok: false, rejection: decision.rejection };

    const plan = planCommitWrites(op, hash, locked, now);
    const { committed } = plan.facts;
    const { receipt } = plan;
    const projection = plan.session;

    // One statement of data-modifying CTEs (see `sendWritesAndCommit`), written out by hand: it is
    // the hottest statement there is, and its text takes only a few shapes (facts or none, the
    // run's step after the fence: settle, crash reset or none), each prepared once per connection.
    const { $, parameters } = placeholders();
    const at = $(now);
    const ctes: string[] = [];
    if (projection) {
      const thread = $(op.threadId);
      const session = $(locked.session_id);
      ctes.push(
        `ev as (insert into events (thread_id, seq, id, session_id, type, body_json, created_at)
          select ${thread}::text, f.seq, f.id, ${session}::text, f.type, f.body_json, ${at}::bigint
          from unnest(${$(committed.map((f) => f.seq))}::bigint[], ${$(committed.map((f) => f.id))}::text[],
            ${$(committed.map((f) => f.type))}::text[], ${$(committed.map((f) => toJson(f.body)))}::text[])
            as f(seq, id, type, body_json))`,
        `th as (update threads set version = ${$(op.expectedVersion + committed.length)}
          where id = ${thread} and version = ${$(op.expectedVersion)} returning id)`,
        `se as (update sessions set status = ${$(projection.status)}, pending_json = ${$(projection.pending_json)},
          usage_json = ${$(projection.usage_json)}, updated_at = ${at} where id = ${session})`,
      );
    }
    if (plan.run) ctes.push(`ru as (${runUpdateSql(plan.run, $)})`);
    const operation = plan.operation;
    ctes.push(
      `co as (insert into commit_operations (op_id, run_id, payload_hash, receipt_json, committed_at)
        values (${$(operation.op_id)}, ${$(operation.run_id)}, ${$(operation.payload_hash)}, ${$(operation.receipt_json)}, ${at}))`,
    );
    const notice = threadNotice(this.notices, op, receipt);
    if (notice) ctes.push(noticeCte(notice, $));
    // Fails (division by zero) unless the thread moved from the expected version, so the COMMIT
    // sent with it rolls back (see `sendWritesAndCommit`).
    const check = projection ? "(select 1 / count(*)::int from th)" : "1";
    const notified = notice ? ", (select count(*) from nf) as notified" : "";
    try {
      await tx.send(
        [{ sql: `with ${ctes.join(", ")} select ${check} as ok${notified}`, parameters }],
        "commit",
      );
    } catch (error) {
      if (projection && isDivisionByZero(error)) throw threadMoved(op.threadId, op.expectedVersion);
      throw error;
    }
    if (notice) this.notices?.carried(notice.payloads);
    this.remember(op.threadId, { ...plan.facts.after, session_id: locked.session_id });
    return { ok: true, receipt, duplicate: false };
  }
}

/** The wake signal a written append causes (`localWorkerGateway`), as its commit carries it. */
function threadNotice(
  notices: CommitNotices | undefined,
  op: CommitOperation,
  receipt: CommitReceipt,
): CarriedNotices | null {
  return carriedNotices(notices, [{ kind: "thread", thread: op.threadId, version: receipt.versionAfter }]);
}

/**
 * The CTE that notifies `notice`'s payloads. A plain SELECT in a WITH runs only when the statement
 * reads it, so the statement's result reads it (`count(*) from nf`); NOTIFY is delivered only
 * if the transaction commits.
 */
function noticeCte(notice: CarriedNotices, $: (value: unknown) => string): string {
  return `nf as (select pg_notify(${$(notice.channel)}, p) from unnest(${$(notice.payloads)}::text[]) as p)`;
}

/** The session columns a commit's projection is computed from, as a store last saw them. */
interface SeenProjection {
  session_id: string;
  status: string;
  pending_json: string;
  usage_json: string;
}

interface AppendRequest {
  op: CommitOperation;
  hash: string;
}

type AppendAnswer =
  | { kind: "appended"; result: CommitResult }
  | { kind: "projection_moved" }
  | { kind: "decide" }
  | { kind: "failed"; error: unknown };

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Threads whose session projection a store remembers (a miss only costs the locked path). */
const PROJECTION_CACHE_SIZE = 10_000;

/**
 * The plan's step after the fence (`planRunAfterCommit`) as `awaken_commit_append_v3`'s arguments
 * (migration 007): a settle names the state the run is left in, and the function writes the settle's
 * columns; `progress` asks for the crash reset the function writes only where the count is not 0.
 * That the function writes exactly the plan's columns is checked by
 * test/stores/writeRulesConformance.test.ts.
 */
export function functionRunStep(run: RunUpdate | null): { run_state: string | null; progress: boolean } {
  if (!run) return { run_state: null, progress: false };
  if (run.onlyIfCrashed) return { run_state: null, progress: true };
  return { run_state: run.set.state ?? null, progress: false };
}

/**
 * A run UPDATE of a write plan (`runWrites.ts`) as SQL text. Its columns are the plan's, so the text
 * takes one shape per rule (settle, crash reset, claim) and is prepared once per connection.
 */
function runUpdateSql(update: RunUpdate, $: (value: unknown) => string): string {
  const set = Object.entries(update.set).map(([column, value]) => `${column} = ${$(value)}`);
  const crashed = update.onlyIfCrashed ? " and crash_count <> 0" : "";
  const epoch = update.ifEpoch !== null ? ` and epoch = ${$(update.ifEpoch)}` : "";
  return `update runs set ${set.join(", ")} where id = ${$(update.id)}${crashed}${epoch}`;
}

/**
 * The fast path's fixed statements, written out by hand: they run on every claim and commit, and
 * are prepared once per connection under their names.
 */
interface ClaimRow {
  id: string;
  session_id: string;
  thread_id: string;
  epoch: number;
  crash_count: number;
  /** The picked row's state before the claim (locked, so its latest version): a lapsed lease? */
  reclaimed: boolean;
  claimable_since: number | string;
  trace_context: string | null;
  status: string | null;
  pending_json: string | null;
  usage_json: string | null;
  workspace_id: string | null;
  agent_snapshot_json: string | null;
  environment_id: string | null;
  environment_revision: number | null;
  metadata_json: string | null;
  data_subject: string | null;
  config_json: string | null;
  history: Database["events"][];
}

/** How long a claimable run may be passed over for a preferred one (`ClaimPort.claim`). */
const PREFERENCE_WINDOW_MS = 1_000;

/**
 * One pick of the claim statement: a run claimable at `at` (queued by then, or its lease lapsed by
 * then), narrowed by `only`, ordered and limited by `order`, locked unless another claim holds it.
 */
function claimablePick(at: string, order: string, only?: string): string {
  const claimable = `(state = 'queued' and available_at <= ${at}) or (state = 'claimed' and lease_expires_at <= ${at})`;
  return `select id as picked_id, state = 'claimed' as reclaimed,
          case when state = 'claimed' then lease_expires_at else available_at end as claimable_since
        from runs
        where ${only === undefined ? claimable : `${only} and (${claimable})`}
        ${order} for update skip locked`;
}

/**
 * $1 owner, $2 lease expiry, $3 now, $4 the run to prefer (or null), $5 now minus the preference
 * window. Its SET is `planClaim` (stores/sql/runWrites.ts) in SQL, so the claim is one statement;
 * test/stores/writeRulesConformance.test.ts checks the two agree. The states are literals, not
 * parameters: the statement is prepared, and a generic plan that knew neither state could not tell
 * the few runnable runs from all the finished ones. It picks, in this order, the oldest run
 * claimable since before the window, the preferred run (a primary-key lookup), the oldest run: the
 * executor runs a UNION ALL's branches in order and stops at the LIMIT, so a branch after the one
 * that found a run neither reads nor locks anything. The last column fails the statement (division
 * by zero), and with it the claim, when the session or its pinned environment revision is missing.
 */
const CLAIM = {
  name: "awaken_claim_v5",
  sql: `with claimed as (
    update runs r set state = 'claimed', owner = $1, epoch = r.epoch + 1, lease_expires_at = $2,
      crash_count = r.crash_count + case when r.state = 'claimed' then 1 else 0 end, updated_at = $3
    from (
      select * from (${claimablePick("$5", "order by available_at limit 1")}) waiting
      union all
      select * from (${claimablePick("$3", "", "id = $4")}) preferred
      union all
      select * from (${claimablePick("$3", "order by available_at limit 1")}) oldest
      limit 1) p
    where r.id = p.picked_id
    returning r.id, r.session_id, r.thread_id, r.epoch, r.crash_count, r.trace_context, p.reclaimed, p.claimable_since)
  select c.id, c.session_id, c.thread_id, c.epoch, c.crash_count, c.trace_context, c.reclaimed, c.claimable_since,
    s.status, s.pending_json, s.usage_json, s.workspace_id, s.agent_snapshot_json, s.environment_id, s.environment_revision, s.metadata_json, s.data_subject, er.config_json,
    (select coalesce(json_agg(e order by e.seq), '[]') from events e where e.thread_id = c.thread_id) as history,
    1 / (case when s.id is null or er.environment_id is null then 0 else 1 end) as complete
  from claimed c
  left join sessions s on s.id = c.session_id
  left join environment_revisions er on er.environment_id = s.environment_id and er.revision = s.environment_revision`,
} as const;

interface CommitLockRow {
  version: number;
  state: string;
  owner: string | null;
  epoch: number;
  lease_expires_at: number | null;
  session_id: string;
  status: string;
  pending_json: string;
  usage_json: string;
  payload_hash: string | null;
  receipt_json: string | null;
}

/** $1 run, $2 operation id, $3 thread. Locks thread, run, session, in that order. */
const COMMIT_LOCK = {
  name: "awaken_commit_lock_v1",
  sql: `select t.version, r.state, r.owner, r.epoch, r.lease_expires_at, r.session_id,
      s.status, s.pending_json, s.usage_json, c.payload_hash, c.receipt_json
    from threads t
    join runs r on r.id = $1
    join sessions s on s.id = r.session_id
    left join commit_operations c on c.op_id = $2
    where t.id = $3
    for update of t, r, s`,
} as const;

interface AppendRow {
  o_index: number;
  o_outcome: "appended" | "projection_moved" | "decide";
  o_status: string | null;
  o_pending_json: string | null;
  o_usage_json: string | null;
}

/**
 * Plain appends as one call, a batch at a time (see migration 006 for the function and its checks,
 * 012 for its notifications).
 */
const APPEND = {
  name: "awaken_commit_append_v3",
  text: `select o_index, o_outcome, o_status, o_pending_json, o_usage_json
    from awaken_commit_append_v3($1, $2, $3, $4, $5)`,
} as const;

/** $1 operation id. */
const OPERATION = {
  name: "awaken_commit_operation_v1",
  sql: "select payload_hash, receipt_json from commit_operations where op_id = $1",
} as const;

/**
 * Sends data-modifying CTEs as ONE statement, in the batch that commits: each runs exactly once and
 * to completion, all against the same snapshot, on rows this transaction has locked (or new rows).
 * `moved` names a CTE that must have returned exactly one row (the thread whose version it moved
 * from the expected one): if it returned none, the statement fails on purpose (a division by
 * zero), so the COMMIT sent with it ends the transaction as a rollback and `moved()` is thrown.
 */
export async function sendWritesAndCommit(
  tx: PipelinedTransaction,
  db: Db,
  writes: readonly RawBuilder<unknown>[],
  moved: string | null,
  movedError: () => Error,
  notice: CarriedNotices | null = null,
): Promise<void> {
  if (writes.length === 0) {
    await tx.commit();
    return;
  }
  const check = moved ? sql`(select 1 / count(*)::int from ${sql.table(moved)})` : sql`1`;
  // The wake notification travels in the same statement (see `noticeCte`).
  const ctes = notice
    ? [
        ...writes,
        sql`nf as (select pg_notify(${notice.channel}, p) from unnest(${notice.payloads}::text[]) as p)`,
      ]
    : writes;
  const notified = notice ? sql`, (select count(*) from nf) as notified` : sql``;
  const statement = sql`with ${sql.join(ctes)} select ${check} as ok${notified}`.compile(db);
  try {
    await tx.send([statement], "commit");
  } catch (error) {
    if (moved && isDivisionByZero(error)) throw movedError();
    throw error;
  }
}

/**
 * Inserts committed facts (all of one thread, one session, one time) as `events` rows. The rows
 * travel as arrays, so the statement has one text whatever the number of facts (it is prepared).
 */
export function insertEvents(committed: readonly CommittedFact[]): RawBuilder<unknown> {
  const [first] = committed;
  if (!first) throw new Error("insertEvents: no facts");
  return sql`insert into events (thread_id, seq, id, session_id, type, body_json, created_at)
    select ${first.threadId}::text, f.seq, f.id, ${first.sessionId}::text, f.type, f.body_json, ${first.createdAt}::bigint
    from unnest(${committed.map((f) => f.seq)}::bigint[], ${committed.map((f) => f.id)}::text[],
      ${committed.map((f) => f.type)}::text[], ${committed.map((f) => toJson(f.body))}::text[])
      as f(seq, id, type, body_json)`;
}

/** PostgreSQL's division_by_zero (SQLSTATE 22012): how a statement here refuses on purpose. */
export function isDivisionByZero(error: unknown): boolean {
  return sqlState(error) === "22012";
}

/** A deadlock (40P01) or serialization failure (40001): the transaction was rolled back, retry. */
export function isRetryableConflict(error: unknown): boolean {
  const code = sqlState(error);
  return code === "40P01" || code === "40001";
}

/**
 * PostgreSQL refused a JSON string escape while reading the batch: invalid_text_representation
 * (22P02, e.g. "Unicode low surrogate must follow a high surrogate") or untranslatable_character
 * (22P05, "\u0000 cannot be converted to text").
 */
export function isUnreadableJson(error: unknown): boolean {
  const code = sqlState(error);
  return code === "22P02" || code === "22P05";
}

/** PostgreSQL's unique_violation (SQLSTATE 23505), as node-pg reports it. */
export function isUniqueViolation(error: unknown): boolean {
  return sqlState(error) === "23505";
}

/** The SQLSTATE node-pg puts on a server error (`code`), or undefined for anything else. */
function sqlState(error: unknown): unknown {
  return typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
}
