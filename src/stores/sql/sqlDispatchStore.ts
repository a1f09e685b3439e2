import { sql } from "kysely";
import { decideCommit } from "../../coordinator/commitFence.js";
import {
  type CommitOperation,
  type CommitReceipt,
  type CommitResult,
  payloadHash,
} from "../../coordinator/commitOperation.js";
import type { Activation, DispatchStore } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import { activationFromRows, claimedFrom } from "./activationRows.js";
import { rowToFact } from "./appendFacts.js";
import { commitReadsProjection, planCommitWrites, UNREAD_PROJECTION } from "./commitWrites.js";
import { begin, type Db, fromJson, type SqlDialect } from "./db.js";
import { executeCommitWrites, executeRunUpdate } from "./executeWrites.js";
import { planClaim } from "./runWrites.js";

/**
 * Claims and the commit fence in dialect-neutral Kysely. SQLite serialises writers, so its
 * transactions need nothing more. On PostgreSQL transactions run side by side, and the rows a
 * decision reads are locked first, always in the same order — thread, then run — by every writer
 * (this store and the input ledger), so a decision cannot be overtaken and locks never deadlock:
 * - claim: `FOR UPDATE SKIP LOCKED` on the run row, so concurrent claimers take different runs and
 *   never wait on each other (a run whose row is locked is being committed, cancelled or claimed);
 * - commit: the thread row, then the run row `FOR UPDATE`, so no claim, cancel or other commit can
 *   change the epoch, the lease or the version between the fence decision and the append;
 * - renew and release: one conditional UPDATE each, which PostgreSQL evaluates atomically against
 *   the latest row version (it waits for a concurrent writer, then re-checks the WHERE).
 * The PostgreSQL bundle uses `PostgresDispatchStore` (stores/postgres/), which takes the same locks
 * in the same order with fewer statements and falls back to this code for its rare paths.
 */
export class SqlDispatchStore implements DispatchStore {
  private readonly rowLocks: boolean;

  constructor(
    protected readonly db: Db,
    protected readonly clock: Clock,
    protected readonly dialect: SqlDialect = "sqlite",
  ) {
    this.rowLocks = dialect === "postgres";
  }

  async claim(owner: string, leaseMs: number): Promise<Activation | null> {
    return begin(this.db, this.dialect).execute(async (tx) => {
      const now = this.clock.now();
      const run = await tx
        .selectFrom("runs")
        .selectAll()
        .where((eb) =>
          eb.or([
            eb.and([eb("state", "=", "queued"), eb("available_at", "<=", now)]),
            eb.and([eb("state", "=", "claimed"), eb("lease_expires_at", "<=", now)]),
          ]),
        )
        .orderBy("available_at", "asc")
        .limit(1)
        .$if(this.rowLocks, (qb) => qb.forUpdate().skipLocked())
        .executeTakeFirst();
      if (!run) return null;
      // Reclaiming an expired lease counts against the run's crash budget (see planClaim).
      const leaseExpiresAt = now + leaseMs;
      const { epoch, crashCount, update } = planClaim(run, owner, leaseExpiresAt, now);
      if (!(await executeRunUpdate(tx, update))) return null;
      const session = await tx
        .selectFrom("sessions")
        .select([
          "workspace_id",
          "agent_snapshot_json",
          "environment_id",
          "environment_revision",
          "metadata_json",
          "data_subject",
        ])
        .where("id", "=", run.session_id)
        .executeTakeFirstOrThrow();
      const env = await tx
        .selectFrom("environment_revisions")
        .select("config_json")
        .where("environment_id", "=", session.environment_id)
        .where("revision", "=", Number(session.environment_revision))
        .executeTakeFirst();
      const history = await tx
        .selectFrom("events")
        .selectAll()
        .where("thread_id", "=", run.thread_id)
        .orderBy("seq", "asc")
        .execute();
      return activationFromRows(
        {
          runId: run.id,
          sessionId: run.session_id,
          threadId: run.thread_id,
          owner,
          epoch,
          leaseExpiresAt,
          crashCount,
          ...claimedFrom(run),
          traceContext: run.trace_context ?? null,
        },
        session,
        env?.config_json,
        history.map(rowToFact),
      );
    });
  }

  async renew(runId: string, owner: string, epoch: number, leaseMs: number): Promise<boolean> {
    const now = this.clock.now();
    const result = await this.db
      .updateTable("runs")
      .set({ lease_expires_at: now + leaseMs, updated_at: now })
      .where("id", "=", runId)
      .where("owner", "=", owner)
      .where("epoch", "=", epoch)
      .where("state", "=", "claimed")
      .where("lease_expires_at", ">", now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async release(runId: string, owner: string, epoch: number): Promise<void> {
    const now = this.clock.now();
    await this.db
      .updateTable("runs")
      .set({ state: "queued", owner: null, lease_expires_at: null, available_at: now, updated_at: now })
      .where("id", "=", runId)
      .where("owner", "=", owner)
      .where("epoch", "=", epoch)
      .where("state", "=", "claimed")
      .execute();
  }

  async lapseClaimsOf(ownerPrefix: string, notRenewedAfter?: number): Promise<string[]> {
    const now = this.clock.now();
    // A prefix compared with `substr`, not LIKE: the owner is a worker's string, never a pattern.
    const rows = await this.db
      .updateTable("runs")
      .set({ lease_expires_at: now, updated_at: now })
      .where("state", "=", "claimed")
      .where("lease_expires_at", ">", now)
      .where(sql<string>`substr(owner, 1, ${ownerPrefix.length})`, "=", ownerPrefix)
      .$if(notRenewedAfter !== undefined, (qb) => qb.where("updated_at", "<=", notRenewedAfter ?? now))
      .returning("id")
      .execute();
    return rows.map((r) => r.id);
  }

  async commit(op: CommitOperation): Promise<CommitResult> {
    const hash = payloadHash(op);
    return begin(this.db, this.dialect).execute(async (tx): Promise<CommitResult> => {
      // Locks first (PostgreSQL), thread then run; every read after them sees the latest commits.
      const thread = await tx
        .selectFrom("threads")
        .select("version")
        .where("id", "=", op.threadId)
        .$if(this.rowLocks, (qb) => qb.forUpdate())
        .executeTakeFirst();
      const runRow = await tx
        .selectFrom("runs")
        .select(["state", "owner", "epoch", "lease_expires_at", "session_id"])
        .where("id", "=", op.runId)
        .$if(this.rowLocks, (qb) => qb.forUpdate())
        .executeTakeFirst();
      const existingRow = await tx
        .selectFrom("commit_operations")
        .select(["payload_hash", "receipt_json"])
        .where("op_id", "=", op.opId)
        .executeTakeFirst();
      // Read after the locks were granted, so a lease that lapsed while waiting counts as lapsed.
      const now = this.clock.now();
      const decision = decideCommit(op, hash, {
        existing: existingRow
          ? {
              payloadHash: existingRow.payload_hash,
              receipt: fromJson<CommitReceipt>(existingRow.receipt_json),
            }
          : null,
        run: runRow
          ? {
              state: runRow.state,
              owner: runRow.owner,
              epoch: Number(runRow.epoch),
              leaseExpiresAt: runRow.lease_expires_at === null ? null : Number(runRow.lease_expires_at),
            }
          : null,
        threadVersion: thread ? Number(thread.version) : -1,
        now,
      });
      if (decision.kind === "duplicate") return { ok: true, receipt: decision.receipt, duplicate: true };
      if (decision.kind === "reject") return { ok: false, rejection: decision.rejection };
      if (!runRow) throw new Error("unreachable: fence accepted a commit without a run");

      const seen = commitReadsProjection(op)
        ? await tx
            .selectFrom("sessions")
            .select(["status", "pending_json", "usage_json"])
            .where("id", "=", runRow.session_id)
            .executeTakeFirstOrThrow()
        : UNREAD_PROJECTION;
      const writes = planCommitWrites(op, hash, { ...seen, session_id: runRow.session_id }, now);
      await executeCommitWrites(tx, runRow.session_id, writes);
      const receipt = writes.receipt;
      return { ok: true, receipt, duplicate: false };
    });
  }
}
