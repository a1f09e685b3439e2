import { sql } from "kysely";
import type { Db } from "./db.js";

/** The states a run waiting for or held by a worker is in, as the queue-depth gauge reports them. */
export type RunQueueState = "queued" | "delayed" | "claimed" | "lapsed";

/**
 * How many runs are waiting for a worker or held by one, read at scrape time: one grouped count
 * over the runs still in `queued` or `claimed` (the partial index of claimable runs holds only
 * those, so finished runs are never scanned). Every replica reads the same table, so every replica reports the same
 * figure.
 */
export class SqlRunQueueStats {
  constructor(private readonly db: Db) {}

  async counts(now: number): Promise<Record<RunQueueState, number>> {
    const rows = await this.db
      .selectFrom("runs")
      .select([
        sql<RunQueueState>`case
          when state = 'queued' and available_at <= ${now} then 'queued'
          when state = 'queued' then 'delayed'
          when lease_expires_at > ${now} then 'claimed'
          else 'lapsed' end`.as("bucket"),
        (eb) => eb.fn.countAll().as("n"),
      ])
      // Literals, so a prepared plan can use the partial index of claimable runs.
      .where(sql<boolean>`state in ('queued', 'claimed')`)
      .groupBy("bucket")
      .execute();
    const counts: Record<RunQueueState, number> = { queued: 0, delayed: 0, claimed: 0, lapsed: 0 };
    for (const row of rows) counts[row.bucket] = Number(row.n);
    return counts;
  }
}
