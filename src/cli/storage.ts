import { join } from "node:path";
import { type Kysely, sql } from "kysely";
import type { Logger } from "pino";
import type { ControlStores, RevocationNotices } from "../control/ports.js";
import type { CoordinatorStores, WakeSignals } from "../coordinator/ports.js";
import type { PushOutboxStore } from "../coordinator/pushOutbox.js";
import { RunHandOff } from "../coordinator/runHandOff.js";
import { InProcessWakeSignals } from "../coordinator/wakeSignals.js";
import type { WebhookStore } from "../coordinator/webhookOutbox.js";
import type { DeploymentStore } from "../deployments/ports.js";
import type { DreamStore } from "../dreams/ports.js";
import { type Clock, sleep } from "../kernel/clock.js";
import { LocalBlobStore } from "../resources/blobs/localBlobStore.js";
import type { BlobStore } from "../resources/ports.js";
import type { ResourceStores } from "../resources/services.js";
import { NotifyWakeSignals } from "../stores/postgres/notifyWakeSignals.js";
import { openPostgres, redact } from "../stores/postgres/openPostgres.js";
import { postgresControlStores, postgresCoordinatorStores } from "../stores/postgres/postgresStores.js";
import { StatementCounter } from "../stores/postgres/statementCounter.js";
import { SqlQuotaUsage } from "../stores/sql/quotaUsage.js";
import type { Database } from "../stores/sql/schema.js";
import { SqlBlobStore } from "../stores/sql/sqlBlobStore.js";
import { SqlDeploymentStore } from "../stores/sql/sqlDeploymentStore.js";
import { SqlDreamStore } from "../stores/sql/sqlDreamStore.js";
import { SqlInstallationFacts } from "../stores/sql/sqlInstallationFacts.js";
import { SqlPushOutboxStore } from "../stores/sql/sqlPushOutboxStore.js";
import { SqlRunQueueStats } from "../stores/sql/sqlRunQueueStats.js";
import { SqlRunSessions } from "../stores/sql/sqlRunSessions.js";
import { SqlWebhookStore } from "../stores/sql/sqlWebhookStore.js";
import { SqlWorkerRoster } from "../stores/sql/sqlWorkerRoster.js";
import { SqlWorkspaceThreads } from "../stores/sql/sqlWorkspaceThreads.js";
import { controlStores, resourceStores } from "../stores/sql/storeBundles.js";
import { openSqlite } from "../stores/sqlite/openSqlite.js";
import { lockSqliteFile } from "../stores/sqlite/singleWriterLock.js";
import { SqliteDispatchStore } from "../stores/sqlite/sqliteDispatchStore.js";
import { sqliteCoordinatorStores } from "../stores/sqlite/sqliteStores.js";

/** Where the all-in-one server keeps its authority: a database URL, else SQLite in the data dir. */
export interface StorageOptions {
  dataDir: string;
  /** `postgres://…`; when absent the embedded SQLite file `<dataDir>/awaken.db` is used. */
  databaseUrl?: string | undefined;
  /** PostgreSQL connections this process may open for queries (default 20); the wake LISTEN has its own. */
  poolSize?: number | undefined;
}

/** `awaken up --db-pool-size` default: pg's own default of 10 queues requests under load. */
export const DEFAULT_DB_POOL_SIZE = 20;

/** The role-narrowed store bundles of one backend, its wake signals, and how to close them. */
export interface Storage {
  /** For logs and the start-up banner; never contains a password. */
  description: string;
  control: ControlStores;
  coordinator: CoordinatorStores;
  /** Files, skills, memory stores and session resources (the Resources context). */
  resources: ResourceStores;
  /** Dreams (their output stores are written with the memory family's tables, in one transaction). */
  dreams: DreamStore;
  /**
   * Their bytes: a content-addressed directory in the data dir on SQLite (one host), the database
   * on PostgreSQL (every replica and remote worker reaches it).
   */
  blobs: BlobStore;
  /** Which session a run belongs to (the worker transport's credential route binds claims with it). */
  runSessions: SqlRunSessions;
  /** What workspace quotas count: active runs, sessions created, committed usage in a window. */
  quotaUsage: SqlQuotaUsage;
  /** What every process on this database agrees on (the master key's id, the bootstrap key). */
  facts: SqlInstallationFacts;
  /** A2A push-notification configs and their durable outbox. */
  push: PushOutboxStore;
  /** Deployments and their runs (the Deployment context). */
  deployments: DeploymentStore;
  /** Webhook endpoints, the sessions their events follow, and their rows in the push outbox. */
  webhooks: WebhookStore;
  /** The queue-depth gauge's count, read at scrape time. */
  runQueue: SqlRunQueueStats;
  /** Which workers hold which of a workspace's runs, and its self-hosted pollers. */
  workerRoster: SqlWorkerRoster;
  /** Which threads are within a reach (the session change feed's filter). */
  workspaceThreads: SqlWorkspaceThreads;
  /**
   * PostgreSQL only: the query pool's connections now (SQLite has one synchronous writer and no
   * pool). The wake LISTEN connection is not part of it.
   */
  poolUse?: () => PoolUse;
  /** In-process on SQLite (one process owns the file); LISTEN/NOTIFY across replicas on PostgreSQL. */
  signals: WakeSignals;
  /**
   * PostgreSQL only: where this process's worker lends its idle slots to the input ledger, which
   * claims a send's run for one in the send's own statement (SQLite's claims cost no round trip).
   */
  handOff?: RunHandOff;
  /** PostgreSQL only: key revocations told to every replica on the database (one process owns SQLite). */
  revocations?: RevocationNotices;
  /**
   * SQLite only (one process holds the file, under a lock): ends the leases of claims an earlier
   * incarnation of this process held, so its runs resume at once instead of after the lease.
   */
  lapseClaimsOf?: (ownerPrefix: string) => Promise<number>;
  /** SQLite only, likewise: the push-outbox rows the previous incarnation held go out now. */
  lapsePushLeases?: () => Promise<number>;
  /** The migrations the database records as applied: one indexed read, the readiness probe's query. */
  appliedMigrations(): Promise<string[]>;
  close(): Promise<void>;
}

export interface PoolUse {
  max: number;
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** How long start-up waits for the first LISTEN before serving anyway (polling covers the gap). */
const LISTEN_START_TIMEOUT_MS = 5_000;

/**
 * AWAKEN_BENCH_COUNT_STATEMENTS=<file>: the turn benchmark's statement counter. Each SIGUSR2 writes
 * the counts so far to the file (bench/statementCounts.mjs reads them before and after its timed
 * turns). Unset, the pool counts nothing.
 */
function benchStatementCounter(): { statementCounter?: StatementCounter } {
  const file = process.env.AWAKEN_BENCH_COUNT_STATEMENTS;
  if (!file) return {};
  const counter = new StatementCounter();
  process.on("SIGUSR2", () => counter.writeTo(file));
  return { statementCounter: counter };
}

export function sqliteFile(dataDir: string): string {
  return join(dataDir, "awaken.db");
}

/** Opens (and migrates) the backend the options name. The only place that chooses one. */
export async function openStorage(options: StorageOptions, clock: Clock, logger: Logger): Promise<Storage> {
  if (options.databaseUrl) {
    const log = logger.child({ component: "postgres" });
    const poolSize = options.poolSize ?? DEFAULT_DB_POOL_SIZE;
    const handle = await openPostgres(options.databaseUrl, {
      maxConnections: poolSize,
      ...benchStatementCounter(),
      onIdleError: (error) => log.warn({ err: error }, "idle PostgreSQL connection failed; it is replaced"),
    });
    const description = `PostgreSQL ${redact(options.databaseUrl)} (schema ${handle.schema}), pool of ${poolSize} connections`;
    log.info({ applied: handle.applied }, `storage: ${description}`);
    const signals = new NotifyWakeSignals({
      db: handle.db,
      connectionString: options.databaseUrl,
      schema: handle.schema,
      log: logger.child({ component: "wake-signals" }),
    });
    // A replica that serves before it hears other replicas would make its first streams poll.
    const listening = await Promise.race([
      signals.whenListening().then(() => true),
      sleep(LISTEN_START_TIMEOUT_MS).then(() => false),
    ]);
    if (!listening) log.warn("wake LISTEN not up yet; serving anyway (streams and workers poll)");
    const handOff = new RunHandOff();
    return {
      description,
      control: postgresControlStores(handle),
      // The hot commits carry their wake NOTIFY in the committing statement.
      coordinator: postgresCoordinatorStores(handle, clock, signals, handOff),
      handOff,
      resources: resourceStores(handle.db, "postgres"),
      dreams: new SqlDreamStore(handle.db, "postgres"),
      blobs: new SqlBlobStore(handle.db, clock),
      runSessions: new SqlRunSessions(handle.db),
      quotaUsage: new SqlQuotaUsage(handle.db),
      facts: new SqlInstallationFacts(handle.db),
      push: new SqlPushOutboxStore(handle.db, "postgres"),
      deployments: new SqlDeploymentStore(handle.db, "postgres"),
      webhooks: new SqlWebhookStore(handle.db, "postgres"),
      runQueue: new SqlRunQueueStats(handle.db),
      workerRoster: new SqlWorkerRoster(handle.db),
      workspaceThreads: new SqlWorkspaceThreads(handle.db),
      poolUse: () => ({
        max: poolSize,
        total: handle.pool.totalCount,
        idle: handle.pool.idleCount,
        waiting: handle.pool.waitingCount,
      }),
      signals,
      // On the wake channel: a revoked key is refused by every replica at once.
      revocations: signals,
      appliedMigrations: () => appliedMigrations(handle.db, handle.schema),
      close: async () => {
        // Signals first: pending NOTIFYs still need the pool.
        await signals.close();
        await handle.close();
      },
    };
  }
  const file = sqliteFile(options.dataDir);
  const lock = await lockSqliteFile(file);
  const handle = await openSqlite(file).catch(async (error: unknown) => {
    await lock.release();
    throw error;
  });
  logger.info({ component: "sqlite" }, `storage: SQLite ${file}`);
  const dispatch = new SqliteDispatchStore(handle.writer, clock);
  const push = new SqlPushOutboxStore(handle.db, "sqlite");
  return {
    description: `SQLite ${file}`,
    control: controlStores(handle.db),
    coordinator: { ...sqliteCoordinatorStores(handle, clock), dispatch },
    resources: resourceStores(handle.db),
    dreams: new SqlDreamStore(handle.db, "sqlite"),
    blobs: new LocalBlobStore(join(options.dataDir, "blobs")),
    runSessions: new SqlRunSessions(handle.db),
    quotaUsage: new SqlQuotaUsage(handle.db),
    facts: new SqlInstallationFacts(handle.db),
    push,
    deployments: new SqlDeploymentStore(handle.db, "sqlite"),
    webhooks: new SqlWebhookStore(handle.db, "sqlite"),
    runQueue: new SqlRunQueueStats(handle.db),
    workerRoster: new SqlWorkerRoster(handle.db),
    workspaceThreads: new SqlWorkspaceThreads(handle.db),
    signals: new InProcessWakeSignals(),
    lapseClaimsOf: async (ownerPrefix) => (await dispatch.lapseClaimsOf(ownerPrefix)).length,
    lapsePushLeases: () => push.lapseAllLeases(),
    appliedMigrations: () => appliedMigrations(handle.db),
    close: async () => {
      await handle.close();
      await lock.release();
    },
  };
}

/** Kysely's bookkeeping table, in the server's own schema on PostgreSQL (never another's). */
async function appliedMigrations(db: Kysely<Database>, schema?: string): Promise<string[]> {
  const table = schema ? sql.id(schema, "kysely_migration") : sql.id("kysely_migration");
  const { rows } = await sql<{ name: string }>`select name from ${table} order by name`.execute(db);
  return rows.map((r) => r.name);
}
