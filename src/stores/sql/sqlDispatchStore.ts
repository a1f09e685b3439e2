import { sql } from "kysely";
import type { CommitOperation, CommitResult } from "../../coordinator/commitOperation.js";
import type { Activation, DispatchStore } from "../../coordinator/ports.js";
import type { Clock } from "../../kernel/clock.js";
import type { Db } from "./db.js";

/**
 * What the dispatch store does the same way on both backends: the lease's renewal and release,
 * one conditional UPDATE each, which PostgreSQL evaluates atomically against the latest row
 * version (it waits for a concurrent writer, then re-checks the WHERE). Claims and the commit
 * fence are each backend's executor of the one plan (stores/sql/runWrites.ts, commitWrites.ts):
 * `SqliteDispatchStore` and `PostgresDispatchStore`.
 */
export abstract class SqlDispatchStore implements DispatchStore {
  constructor(
    protected readonly db: Db,
    protected readonly clock: Clock,
  ) {}

  abstract claim(owner: string, leaseMs: number, prefer?: string): Promise<Activation | null>;

  abstract commit(op: CommitOperation): Promise<CommitResult>;

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
      // A literal, so a prepared plan can use the partial index of claimable runs.
      .where(sql<string>`state`, "=", sql.lit("claimed"))
      .where("lease_expires_at", ">", now)
      .where(sql<string>`substr(owner, 1, ${ownerPrefix.length})`, "=", ownerPrefix)
      .$if(notRenewedAfter !== undefined, (qb) => qb.where("updated_at", "<=", notRenewedAfter ?? now))
      .returning("id")
      .execute();
    return rows.map((r) => r.id);
  }
}
