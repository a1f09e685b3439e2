import type pg from "pg";
import { decideCommit } from "../../coordinator/commitFence.js";
import { type CommitOperation, type CommitResult, payloadHash } from "../../coordinator/commitOperation.js";
import type { Activation } from "../../coordinator/ports.js";
import { BoundedCache } from "../../kernel/boundedCache.js";
import type { Clock } from "../../kernel/clock.js";
import { activationFromRows } from "../sql/activationRows.js";
import { type ProjectionColumns, placedFacts, rowFacts, type StoredFact } from "../sql/appendFacts.js";
import {
  type AnswerWrites,
  operationIdOf,
  planAnswerWrites,
  planCommitWrites,
  storedOperation,
} from "../sql/commitWrites.js";
import type { Db } from "../sql/db.js";
import { type Head, headFrom, runAgentSql } from "../sql/sessionHead.js";
import { SqlDispatchStore } from "../sql/sqlDispatchStore.js";
import { casStatement, placeholders } from "./casStatement.js";
import { type CommitNotices, carriedNotices } from "./commitNotices.js";
import type { EnvironmentConfigs } from "./environmentConfigs.js";
import type { InputReadCache } from "./inputReadCache.js";

/** A fenced commit retried after its statement wrote nothing and the fence still said append. */
const COMMIT_ATTEMPTS = 8;

/**
 * Claims and the commit fence on PostgreSQL: each one statement in one round trip, no explicit
 * transaction. READ COMMITTED (`openPostgres` makes it every connection's default).
 *
 * Claim: one statement picks the oldest claimable run `FOR UPDATE SKIP LOCKED` (concurrent
 * claimers take different runs), advances its epoch, lease and crash count as `planClaim` does,
 * and returns it with its session's pinned agent and environment, the thread's history and head.
 *
 * Commit: the plan (`planCommitWrites`) on top of the thread's projection at the expected version
 * (remembered from the last claim or commit of the thread: a commit row never changes, so the
 * projection a version had is the one it keeps; read when not remembered), executed by one
 * statement (`casStatement`) that locks the run row only if it is still the claim the operation
 * holds (state, owner, epoch, unexpired lease, thread) and inserts the commit row; the primary
 * key (thread, base version) is the version check, and the duplicate check too: an operation
 * appends at its expected version, so a retry meets its own row there. When it writes nothing, the fence's state is read and `decideCommit` says why (stale
 * claim, version conflict, duplicate); it says `append` only if the refusal was a transaction
 * that did not commit, and the statement is sent again.
 */
export class PostgresDispatchStore extends SqlDispatchStore {
  /** Per thread, the head this store last saw (from a claim or its own commit); a miss costs one read. */
  private readonly heads = new BoundedCache<string, Head & { sessionId: string }>({ maxEntries: 10_000 });

  constructor(
    db: Db,
    private readonly pool: pg.Pool,
    clock: Clock,
    private readonly notices?: CommitNotices,
    private readonly reads?: InputReadCache,
    private readonly environments?: EnvironmentConfigs,
  ) {
    super(db, clock);
  }

  async claim(owner: string, leaseMs: number, prefer?: string): Promise<Activation | null> {
    const now = this.clock.now();
    const leaseExpiresAt = now + leaseMs;
    const { rows } = await this.pool.query<ClaimRow>({
      name: CLAIM.name,
      text: CLAIM.sql,
      values: [owner, leaseExpiresAt, now, prefer ?? null, now - PREFERENCE_WINDOW_MS],
    });
    const row = rows[0];
    if (!row) return null;
    if (row.id === null) throw await this.unclaimable(row.picked_id);
    if (
      row.status === null ||
      row.pending_json === null ||
      row.usage_json === null ||
      row.workspace_id === null ||
      row.agent_snapshot_json === null ||
      row.environment_id === null ||
      row.environment_revision === null ||
      row.metadata_json === null
    ) {
      throw new Error(`unreachable: run ${row.id} was claimed without its session`);
    }
    const history = row.history.flatMap(([base, createdAt, facts]) =>
      placedFacts(
        { thread_id: row.thread_id, base_version: base, session_id: row.session_id, created_at: createdAt },
        facts,
      ),
    );
    const head = row.head
      ? headFrom({
          version: row.head[0],
          status: row.head[1],
          pending_json: row.head[2],
          usage_json: row.head[3],
        })
      : { version: 0, status: row.status, pending_json: row.pending_json, usage_json: row.usage_json };
    this.remember(row.thread_id, { ...head, sessionId: row.session_id });
    // What a send on this session may then claim for an idle slot without reading (`appendHandOff`).
    if (row.config_json !== null)
      this.environments?.saw(row.environment_id, Number(row.environment_revision), row.config_json);
    this.reads?.claimed(row.session_id, row.thread_id, head.version, history);
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
        budget_json: row.budget_json,
        has_resources: row.has_resources === true,
      },
      row.config_json ?? undefined,
      history,
    );
  }

  /**
   * Why a picked run was not claimed: its session, or the environment revision the session pins
   * (revisions are never deleted), is missing. Nothing was claimed; every claim fails the same way.
   */
  private async unclaimable(runId: string): Promise<Error> {
    const pinned = await this.db
      .selectFrom("runs as r")
      .leftJoin("sessions as s", "s.id", "r.session_id")
      .select(["s.environment_id", "s.environment_revision"])
      .where("r.id", "=", runId)
      .executeTakeFirst();
    if (!pinned?.environment_id) return new Error(`run ${runId}: its session is missing`);
    return new Error(
      `run ${runId}: environment ${pinned.environment_id} revision ${pinned.environment_revision} pinned by its session is missing`,
    );
  }

  async commit(op: CommitOperation): Promise<CommitResult> {
    const hash = payloadHash(op);
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS; attempt++) {
      const seen = await this.seenAt(op);
      if (seen) {
        const written = await this.commitOnce(op, hash, seen);
        if (written) return written;
      }
      const decision = await this.decide(op, hash);
      if (decision.kind === "duplicate") return { ok: true, receipt: decision.receipt, duplicate: true };
      if (decision.kind === "reject") return { ok: false, rejection: decision.rejection };
      this.heads.delete(op.threadId);
    }
    throw new Error(`commit ${op.opId}: the fence kept accepting what the database kept refusing`);
  }

  /** One statement; the result when it wrote, null when it wrote nothing. */
  private async commitOnce(
    op: CommitOperation,
    hash: string,
    seen: ProjectionColumns & { sessionId: string },
  ): Promise<CommitResult | null> {
    const now = this.clock.now();
    const plan = planCommitWrites(op, hash, { ...seen, session_id: seen.sessionId }, now);
    const answer = op.answer ? await this.planAnswer(op.answer, seen.sessionId, now) : null;
    const notice = carriedNotices(this.notices, [
      { kind: "thread", thread: op.threadId, version: plan.receipt.versionAfter },
    ]);
    const { $, values } = placeholders();
    const guards: string[] = [];
    if (plan.row) {
      // The commit extends the head: the row below it must end where it starts (the primary key
      // already refuses a version taken; this refuses one skipped).
      const base = $(op.expectedVersion);
      guards.push(
        `(${base}::bigint = 0 or (select version from commits where thread_id = ${$(op.threadId)} and base_version < ${base}::bigint order by base_version desc limit 1) = ${base}::bigint)`,
        `not exists (select 1 from commit_operations where op_id = ${$(op.opId)})`,
      );
    } else {
      guards.push(
        `coalesce((select version from commits where thread_id = ${$(op.threadId)} order by base_version desc limit 1), 0) = ${$(op.expectedVersion)}::bigint`,
        // The row an operation's retry meets, its id spelled out where the row leaves it implied.
        `not exists (select 1 from commits where thread_id = ${$(op.threadId)} and base_version = ${$(op.expectedVersion)}::bigint and run_id is not null and coalesce(op_id, 'op_' || run_id || '_v' || base_version) = ${$(op.opId)})`,
      );
    }
    const statement = casStatement(
      {
        locks: [
          `select id from runs where id = ${$(op.runId)} and owner = ${$(op.owner)} and epoch = ${$(op.epoch)}::bigint and state = 'claimed' and lease_expires_at > ${$(now)}::bigint and thread_id = ${$(op.threadId)} for update`,
        ],
        guards,
        row: plan.row,
        operation: plan.operation,
        runInserts: [],
        spawns: plan.spawns,
        answer: answer?.writes ?? null,
        runUpdate: plan.run,
        session: null,
        notice,
      },
      $,
      values,
    );
    const { rows } = await this.pool.query<{ ok: number }>(statement);
    if (rows[0]?.ok !== 1) return null;
    if (notice) this.notices?.carried(notice.payloads);
    const row = plan.row;
    if (row && !answer && (op.spawns ?? []).length === 0) {
      const head = { version: plan.receipt.versionAfter, ...plan.facts.after };
      this.reads?.committed(
        seen.sessionId,
        op.threadId,
        op.expectedVersion,
        head,
        op.runId,
        op.epoch,
        plan.run,
        now,
        () => rowFacts(row),
      );
    } else this.reads?.forget(seen.sessionId);
    if (answer) {
      this.heads.delete(answer.parentThreadId);
      return {
        ok: true,
        receipt: { ...plan.receipt, answeredVersion: answer.writes.row.version },
        duplicate: false,
      };
    }
    this.remember(op.threadId, {
      version: plan.receipt.versionAfter,
      ...plan.facts.after,
      sessionId: seen.sessionId,
    });
    return { ok: true, receipt: plan.receipt, duplicate: false };
  }

  /**
   * A child's answer planned on its parent's head and parked run as read now: the insert at that
   * head fails if the parent moved meanwhile (see `commit`), so a plain read is enough.
   */
  private async planAnswer(
    answer: NonNullable<CommitOperation["answer"]>,
    sessionId: string,
    now: number,
  ): Promise<{ parentThreadId: string; writes: AnswerWrites }> {
    const { rows } = await this.pool.query<{
      version: string | null;
      status: string | null;
      pending_json: string | null;
      usage_json: string | null;
      run_id: string | null;
      run_epoch: string | null;
    }>(
      `select h.version, h.status, h.pending_json, h.usage_json, r.id as run_id, r.epoch as run_epoch
       from (select 1) one
       left join lateral (select version, status, pending_json, usage_json from commits where thread_id = $1 order by base_version desc limit 1) h on true
       left join lateral (select id, epoch from runs where thread_id = $1 and state = 'awaiting' limit 1) r on true`,
      [answer.parentThreadId],
    );
    const row = rows[0];
    if (!row || row.version === null)
      throw new Error(`thread ${answer.parentThreadId} has no history to answer`);
    const parent = headFrom({ ...row, version: row.version });
    const awaiting = row.run_id === null ? null : { id: row.run_id, epoch: Number(row.run_epoch) };
    return {
      parentThreadId: answer.parentThreadId,
      writes: planAnswerWrites(answer, parent, awaiting, sessionId, now),
    };
  }

  /** The projection at the operation's expected version; null when no commit ends there. */
  private async seenAt(op: CommitOperation): Promise<(ProjectionColumns & { sessionId: string }) | null> {
    const known = this.heads.get(op.threadId);
    if (known && known.version === op.expectedVersion) return known;
    const { rows } = await this.pool.query<SeenRow>({
      name: SEEN.name,
      text: SEEN.sql,
      values: [op.runId, op.threadId, op.expectedVersion],
    });
    const row = rows[0];
    if (!row) return null;
    if (row.version === null) {
      return op.expectedVersion === 0
        ? {
            status: row.s_status,
            pending_json: row.s_pending,
            usage_json: row.s_usage,
            sessionId: row.session_id,
          }
        : null;
    }
    if (Number(row.version) !== op.expectedVersion) return null;
    return { ...headFrom({ ...row, version: row.version }), sessionId: row.session_id };
  }

  /** The fence's decision on the state as it is now (a plain read: the decision stands or retries). */
  private async decide(op: CommitOperation, hash: string) {
    const { rows } = await this.pool.query<FenceRow>({
      name: FENCE.name,
      text: FENCE.sql,
      values: [op.runId, op.threadId, op.expectedVersion, op.opId],
    });
    const row = rows[0];
    const commitRow =
      row && row.c_run_id !== null
        ? { op_id: row.c_op_id, run_id: row.c_run_id, base_version: op.expectedVersion }
        : null;
    const existing =
      commitRow && row && operationIdOf(commitRow) === op.opId
        ? storedOperation({
            ...commitRow,
            thread_id: row.c_thread_id ?? op.threadId,
            version: row.c_version ?? 0,
            facts_json: row.c_facts_json ?? "[]",
            created_at: row.c_created_at ?? 0,
            settled: row.c_settled,
            payload_hash: row.c_payload_hash,
          })
        : row?.o_payload_hash && row.o_receipt_json
          ? storedOperation({ payload_hash: row.o_payload_hash, receipt_json: row.o_receipt_json })
          : null;
    return decideCommit(op, hash, {
      existing,
      run:
        row && row.state !== null
          ? {
              state: row.state,
              owner: row.owner,
              epoch: Number(row.epoch),
              leaseExpiresAt: row.lease_expires_at === null ? null : Number(row.lease_expires_at),
              threadId: row.thread_id ?? "",
            }
          : null,
      threadVersion: Number(row?.head ?? 0),
      now: this.clock.now(),
    });
  }

  /** The head of `threadId` as a write of this process left it (a claim, a commit, an append's hand-off). */
  remember(threadId: string, head: Head & { sessionId: string }): void {
    this.heads.set(threadId, head);
  }
}

interface ClaimRow {
  picked_id: string;
  /** Null when the picked run was not claimed (see the statement). */
  id: string | null;
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
  budget_json: string | null;
  has_resources: boolean | null;
  config_json: string | null;
  /** [base_version, created_at, facts] per commit, ascending. */
  history: [number, number, StoredFact[]][];
  /** [version, status, pending_json, usage_json] of the newest commit; null before the first. */
  head: [number, string | null, string | null, string | null] | null;
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
 * window. Its SET is `planClaim` (stores/sql/runWrites.ts) in SQL; the conformance suite checks
 * the two agree. The states are literals, not parameters: the statement is prepared, and a
 * generic plan that knew neither state could not tell the few runnable runs from all the finished
 * ones. It picks, in this order, the oldest run claimable since before the window, the preferred
 * run (a primary-key lookup), the oldest run: the executor runs a UNION ALL's branches in order
 * and stops at the LIMIT, so a branch after the one that found a run reads and locks nothing.
 * A picked run whose session or pinned environment revision is missing is not claimed: the
 * statement returns it unclaimed, and the claim fails.
 */
const CLAIM = {
  name: "awaken_claim_v9",
  sql: `with p as (
      select * from (${claimablePick("$5", "order by available_at limit 1")}) waiting
      union all
      select * from (${claimablePick("$3", "", "id = $4")}) preferred
      union all
      select * from (${claimablePick("$3", "order by available_at limit 1")}) oldest
      limit 1),
    claimed as (
    update runs r set state = 'claimed', owner = $1, epoch = r.epoch + 1, lease_expires_at = $2,
      crash_count = r.crash_count + case when r.state = 'claimed' then 1 else 0 end, updated_at = $3
    from p
    where r.id = p.picked_id and exists (select 1 from sessions s join environment_revisions er
      on er.environment_id = s.environment_id and er.revision = s.environment_revision where s.id = r.session_id)
    returning r.id, r.session_id, r.thread_id, r.epoch, r.crash_count, r.trace_context, p.reclaimed, p.claimable_since)
  select p.picked_id, c.id, c.session_id, c.thread_id, c.epoch, c.crash_count, c.trace_context, c.reclaimed, c.claimable_since,
    s.status, s.pending_json, s.usage_json, s.workspace_id, ${runAgentSql("c.thread_id")} as agent_snapshot_json, s.environment_id, s.environment_revision, s.metadata_json, s.data_subject, s.budget_json, er.config_json,
    exists (select 1 from session_resources sr where sr.session_id = s.id) as has_resources,
    (select coalesce(json_agg(json_build_array(h.base_version, h.created_at, h.facts_json::json) order by h.base_version), '[]')
      from commits h where h.thread_id = c.thread_id) as history,
    (select json_build_array(h.version, h.status, h.pending_json, h.usage_json)
      from commits h where h.thread_id = c.thread_id order by h.base_version desc limit 1) as head
  from p
  left join claimed c on true
  left join sessions s on s.id = c.session_id
  left join environment_revisions er on er.environment_id = s.environment_id and er.revision = s.environment_revision`,
} as const;

interface SeenRow {
  session_id: string;
  s_status: string;
  s_pending: string;
  s_usage: string;
  version: number | string | null;
  status: string | null;
  pending_json: string | null;
  usage_json: string | null;
}

/** $1 run, $2 thread, $3 expected version: the commit that ends at or below it, and the session's start. */
const SEEN = {
  name: "awaken_commit_seen_v1",
  sql: `select r.session_id, s.status as s_status, s.pending_json as s_pending, s.usage_json as s_usage,
      h.version, h.status, h.pending_json, h.usage_json
    from runs r
    join sessions s on s.id = r.session_id
    left join lateral (select version, status, pending_json, usage_json from commits
      where thread_id = $2 and base_version < greatest($3::bigint, 1) order by base_version desc limit 1) h on true
    where r.id = $1`,
} as const;

interface FenceRow {
  state: string | null;
  owner: string | null;
  epoch: number | null;
  lease_expires_at: number | null;
  thread_id: string | null;
  head: number | string | null;
  c_op_id: string | null;
  c_run_id: string | null;
  c_thread_id: string | null;
  c_version: number | null;
  c_facts_json: string | null;
  c_created_at: number | null;
  c_settled: string | null;
  c_payload_hash: string | null;
  o_payload_hash: string | null;
  o_receipt_json: string | null;
}

/**
 * $1 run, $2 thread, $3 the operation's expected version, $4 its id: what `decideCommit` reads. An
 * operation appends at its expected version, so its commit row, if any, is the one based there.
 */
const FENCE = {
  name: "awaken_commit_fence_v3",
  sql: `select r.state, r.owner, r.epoch, r.lease_expires_at, r.thread_id,
      (select version from commits where thread_id = $2 order by base_version desc limit 1) as head,
      c.op_id as c_op_id, c.run_id as c_run_id, c.thread_id as c_thread_id, c.version as c_version,
      c.facts_json as c_facts_json, c.created_at as c_created_at, c.settled as c_settled,
      c.payload_hash as c_payload_hash, o.payload_hash as o_payload_hash, o.receipt_json as o_receipt_json
    from (select 1) one
    left join runs r on r.id = $1
    left join commits c on c.thread_id = $2 and c.base_version = $3
    left join commit_operations o on o.op_id = $4`,
} as const;
