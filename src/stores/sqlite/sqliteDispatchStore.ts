import { decideCommit } from "../../coordinator/commitFence.js";
import { type CommitOperation, type CommitResult, payloadHash } from "../../coordinator/commitOperation.js";
import type { Activation, DispatchStore } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import { activationFromRows, claimedFrom } from "../sql/activationRows.js";
import type { ProjectionColumns } from "../sql/appendFacts.js";
import { planCommitWrites } from "../sql/commitWrites.js";
import { planClaim } from "../sql/runWrites.js";
import { SESSION_AGENT_SQL } from "../sql/sessionHead.js";
import { headSync, readThreadSync, storedOperationSync } from "./syncReads.js";
import type { SyncSql, SyncWriter } from "./syncWriter.js";
import { executeCommitWritesSync, executeRunUpdateSync } from "./syncWrites.js";

interface RunRow {
  id: string;
  session_id: string;
  thread_id: string;
  state: string;
  owner: string | null;
  epoch: number;
  lease_expires_at: number | null;
  available_at: number;
  crash_count: number;
  trace_context: string | null;
}

/**
 * Claims and the commit fence on SQLite, each one synchronous transaction: read what the fence
 * decides on, decide (`decideCommit`), execute the plan (stores/sql/runWrites.ts,
 * commitWrites.ts). PostgreSQL's executor (`PostgresDispatchStore`) executes the same plans; the
 * conformance suite checks both write the same rows.
 */
export class SqliteDispatchStore implements DispatchStore {
  constructor(
    private readonly writer: SyncWriter,
    private readonly clock: Clock,
  ) {}

  claim(owner: string, leaseMs: number): Promise<Activation | null> {
    return this.writer.write((sql) => {
      const now = this.clock.now();
      // Two indexed lookups instead of one OR: queued work first, then lapsed leases.
      const run =
        sql.get<RunRow>(
          "select * from runs where state = 'queued' and available_at <= ? order by available_at limit 1",
          now,
        ) ??
        sql.get<RunRow>(
          "select * from runs where state = 'claimed' and lease_expires_at <= ? order by lease_expires_at limit 1",
          now,
        );
      if (!run) return null;
      // Reclaiming a lapsed lease counts against the run's crash budget (see planClaim).
      const leaseExpiresAt = now + leaseMs;
      const { epoch, crashCount, update } = planClaim(run, owner, leaseExpiresAt, now);
      executeRunUpdateSync(sql, update);
      const session = sql.get<{
        workspace_id: string;
        agent_snapshot_json: string;
        environment_id: string;
        environment_revision: number;
        metadata_json: string;
        data_subject: string | null;
        budget_json: string | null;
        has_resources: number;
      }>(
        `select s.workspace_id, ${SESSION_AGENT_SQL} as agent_snapshot_json, s.environment_id, s.environment_revision, s.metadata_json, s.data_subject, s.budget_json, exists (select 1 from session_resources sr where sr.session_id = s.id) as has_resources from sessions s where s.id = ?`,
        run.session_id,
      );
      if (!session) throw new Error(`run ${run.id} has no session`);
      const env = sql.get<{ config_json: string }>(
        "select config_json from environment_revisions where environment_id = ? and revision = ?",
        session.environment_id,
        session.environment_revision,
      );
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
        readThreadSync(sql, run.thread_id, 0, 1_000_000),
      );
    });
  }

  lapseClaimsOf(ownerPrefix: string, notRenewedAfter?: number): Promise<string[]> {
    return this.writer.write((sql) => {
      const now = this.clock.now();
      const lapse =
        "update runs set lease_expires_at = ?, updated_at = ? where state = 'claimed' and substr(owner, 1, ?) = ? and lease_expires_at > ?";
      const params = [now, now, ownerPrefix.length, ownerPrefix, now];
      const rows =
        notRenewedAfter === undefined
          ? sql.all<{ id: string }>(`${lapse} returning id`, ...params)
          : sql.all<{ id: string }>(`${lapse} and updated_at <= ? returning id`, ...params, notRenewedAfter);
      return rows.map((r) => r.id);
    });
  }

  renew(runId: string, owner: string, epoch: number, leaseMs: number): Promise<boolean> {
    return this.writer.write((sql) => {
      const now = this.clock.now();
      return (
        sql.run(
          "update runs set lease_expires_at = ?, updated_at = ? where id = ? and owner = ? and epoch = ? and state = 'claimed' and lease_expires_at > ?",
          now + leaseMs,
          now,
          runId,
          owner,
          epoch,
          now,
        ) === 1
      );
    });
  }

  async release(runId: string, owner: string, epoch: number): Promise<void> {
    await this.writer.write((sql) => {
      const now = this.clock.now();
      sql.run(
        "update runs set state = 'queued', owner = null, lease_expires_at = null, available_at = ?, updated_at = ? where id = ? and owner = ? and epoch = ? and state = 'claimed'",
        now,
        now,
        runId,
        owner,
        epoch,
      );
    });
  }

  commit(op: CommitOperation): Promise<CommitResult> {
    const hash = payloadHash(op);
    return this.writer.write((sql): CommitResult => {
      const now = this.clock.now();
      const run = sql.get<RunRow>("select * from runs where id = ?", op.runId);
      const head = headSync(sql, op.threadId);
      const decision = decideCommit(op, hash, {
        existing: storedOperationSync(sql, op),
        run: run
          ? {
              state: run.state,
              owner: run.owner,
              epoch: run.epoch,
              leaseExpiresAt: run.lease_expires_at,
              threadId: run.thread_id,
            }
          : null,
        threadVersion: head?.version ?? 0,
        now,
      });
      if (decision.kind === "duplicate") return { ok: true, receipt: decision.receipt, duplicate: true };
      if (decision.kind === "reject") return { ok: false, rejection: decision.rejection };
      if (!run) throw new Error("unreachable: fence accepted a commit without a run");
      const seen = head ?? initialProjection(sql, run.session_id);
      const writes = planCommitWrites(op, hash, { ...seen, session_id: run.session_id }, now);
      executeCommitWritesSync(sql, writes);
      return { ok: true, receipt: writes.receipt, duplicate: false };
    });
  }
}

/** The projection a session starts with (its row's), for a thread without commits. */
export function initialProjection(sql: SyncSql, sessionId: string): ProjectionColumns {
  const row = sql.get<ProjectionColumns>(
    "select status, pending_json, usage_json from sessions where id = ?",
    sessionId,
  );
  if (!row) throw new Error(`session ${sessionId} not found`);
  return row;
}
