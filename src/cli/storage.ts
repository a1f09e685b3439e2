import { join } from "node:path";
import type { Logger } from "pino";
import type { ControlStores } from "../control/ports.js";
import type { CoordinatorStores } from "../coordinator/ports.js";
import type { Clock } from "../kernel/clock.js";
import { openPostgres, redact } from "../stores/postgres/openPostgres.js";
import { postgresControlStores, postgresCoordinatorStores } from "../stores/postgres/postgresStores.js";
import { controlStores } from "../stores/sql/storeBundles.js";
import { openSqlite } from "../stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../stores/sqlite/sqliteStores.js";

/** Where the all-in-one server keeps its authority: a database URL, else SQLite in the data dir. */
export interface StorageOptions {
  dataDir: string;
  /** `postgres://…`; when absent the embedded SQLite file `<dataDir>/awaken.db` is used. */
  databaseUrl?: string | undefined;
}

/** The role-narrowed store bundles of one backend, and how to close it. */
export interface Storage {
  /** For logs and the start-up banner; never contains a password. */
  description: string;
  control: ControlStores;
  coordinator: CoordinatorStores;
  close(): Promise<void>;
}

export function sqliteFile(dataDir: string): string {
  return join(dataDir, "awaken.db");
}

/** Opens (and migrates) the backend the options name. The only place that chooses one. */
export async function openStorage(options: StorageOptions, clock: Clock, logger: Logger): Promise<Storage> {
  if (options.databaseUrl) {
    const log = logger.child({ component: "postgres" });
    const handle = await openPostgres(options.databaseUrl, {
      onIdleError: (error) => log.warn({ err: error }, "idle PostgreSQL connection failed; it is replaced"),
    });
    const description = `PostgreSQL ${redact(options.databaseUrl)} (schema ${handle.schema})`;
    log.info({ applied: handle.applied }, `storage: ${description}`);
    return {
      description,
      control: postgresControlStores(handle),
      coordinator: postgresCoordinatorStores(handle, clock),
      close: () => handle.close(),
    };
  }
  const file = sqliteFile(options.dataDir);
  const handle = await openSqlite(file);
  logger.info({ component: "sqlite" }, `storage: SQLite ${file}`);
  return {
    description: `SQLite ${file}`,
    control: controlStores(handle.db),
    coordinator: sqliteCoordinatorStores(handle, clock),
    close: () => handle.close(),
  };
}
