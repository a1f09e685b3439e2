import type { Clock } from "../kernel/clock.js";
import type { RecentWorkers } from "./meteredGateway.js";
import type { PrometheusMetrics } from "./prometheusMetrics.js";

/** What a scrape reads of the storage the composition opened. */
export interface ScrapedStorage {
  runQueue: { counts(now: number): Promise<Record<string, number>> };
  /** PostgreSQL only: the query pool's connections now. */
  poolUse?: (() => { max: number; total: number; idle: number; waiting: number }) | undefined;
}

/**
 * The gauges read when `/metrics` is scraped, never between scrapes: the run queue from the
 * database (one grouped count), the PostgreSQL pool, and the remote workers seen recently.
 */
export function registerScrapedGauges(
  metrics: PrometheusMetrics,
  storage: ScrapedStorage,
  clock: Clock,
  remoteWorkers: RecentWorkers | null,
): void {
  metrics.gaugeAtScrape({
    name: "awaken_runs",
    help: "Runs waiting for or held by a worker now, by state: queued (claimable now), delayed (queued, claimable later), claimed (lease live), lapsed (lease expired, claimable again). Read from the database at scrape time: every replica reports the same figure.",
    labelNames: ["state"],
    read: async () =>
      Object.entries(await storage.runQueue.counts(clock.now())).map(([state, value]) => ({
        labels: { state },
        value,
      })),
  });
  const poolUse = storage.poolUse;
  if (poolUse) {
    metrics.gaugeAtScrape({
      name: "awaken_db_pool_connections",
      help: "PostgreSQL query pool connections of this process, by state (idle, busy); the wake LISTEN connection is apart.",
      labelNames: ["state"],
      read: () => {
        const use = poolUse();
        return [
          { labels: { state: "idle" }, value: use.idle },
          { labels: { state: "busy" }, value: use.total - use.idle },
        ];
      },
    });
    metrics.gaugeAtScrape({
      name: "awaken_db_pool_max_connections",
      help: "The most connections this process's PostgreSQL query pool opens (--db-pool-size).",
      read: () => [{ value: poolUse().max }],
    });
    metrics.gaugeAtScrape({
      name: "awaken_db_pool_waiting_queries",
      help: "Queries of this process waiting for a PostgreSQL pool connection now (every connection busy).",
      read: () => [{ value: poolUse().waiting }],
    });
  }
  if (remoteWorkers) {
    metrics.gaugeAtScrape({
      name: "awaken_remote_workers",
      help: "Remote worker processes that claimed or renewed through this replica's worker transport in the last 60 seconds.",
      read: () => [{ value: remoteWorkers.count() }],
    });
  }
}
