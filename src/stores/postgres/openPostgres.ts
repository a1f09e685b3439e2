import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { migrateToLatest } from "../sql/migrations/migrate.js";
import type { Database } from "../sql/schema.js";
import { preparingClient } from "./preparingClient.js";
import type { StatementCounter } from "./statementCounter.js";

export interface PostgresHandle {
  db: Kysely<Database>;
  /**
   * The pool under `db`, in node-pg's pipeline mode. Kysely sends one statement at a time and
   * waits for it, which pipeline mode leaves unchanged; the stores' hot paths check out a
   * connection and send several statements per round trip (`pipelinedTransaction`).
   */
  pool: pg.Pool;
  /** The schema the tables live in (the first existing schema on the connection's search_path). */
  schema: string;
  /** Migrations this open applied; empty when another replica (or an earlier start) already had. */
  applied: string[];
  close(): Promise<void>;
}

export interface PostgresOpenOptions {
  /** Pool size (default 10). */
  maxConnections?: number;
  /**
   * Use (and create if missing) this schema as the search_path. Tests isolate themselves this way.
   * A deployment names its schema in the URL instead (`?options=-c search_path=x`; it must exist).
   */
  schema?: string;
  /** Errors of idle pooled connections (server restart, network): pg emits them on the pool. */
  onIdleError?: (error: Error) => void;
  /** Counts every statement and round trip the pool sends (the turn benchmark's; off by default). */
  statementCounter?: StatementCounter;
}

/**
 * A fixed key for `pg_advisory_lock`, shared by every replica ("AWAKEN" in ASCII). Advisory locks
 * are per database, so all schemas in one database migrate one at a time, which is harmless.
 * Whatever drops a schema in a shared database should hold it too: Kysely's Migrator inspects the
 * tables of every schema, by name, and fails when one vanishes in the middle of that query.
 */
export const MIGRATION_LOCK_KEY = 0x4157414b454e;

/**
 * Single-statement transactions (the claim, the commit function) run without BEGIN; they rely on
 * READ COMMITTED as the explicit BEGINs do, whatever default the server was given. A startup
 * option, so a new connection costs no statement (a space in an option value is escaped).
 */
const READ_COMMITTED_DEFAULT = "-c default_transaction_isolation=read\\ committed";

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the PostgreSQL authority: a Kysely `PostgresDialect` on a `pg` pool, migrated to the latest
 * schema before it is returned.
 */
export async function openPostgres(url: string, options: PostgresOpenOptions = {}): Promise<PostgresHandle> {
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new Error(`schema "${options.schema}" must match ${SCHEMA_NAME} (lower-case letters, digits, _)`);
  }
  // The URL parsed here rather than by the pool: pg lets a URL's own `options` replace the ones
  // given beside it, and ours (isolation, schema) must hold whatever the URL asks.
  const fromUrl = parsedUrl(url);
  const pool = new pg.Pool({
    ...fromUrl,
    max: options.maxConnections ?? 10,
    types: int8AsNumber(),
    pipeline: true,
    Client: preparingClient(options.statementCounter),
    // Later `-c` settings win, so the URL's own options go first.
    options: [fromUrl.options, READ_COMMITTED_DEFAULT, options.schema && `-c search_path=${options.schema}`]
      .filter(Boolean)
      .join(" "),
  });
  // Without a listener an idle connection's error (e.g. the server restarting) crashes the process;
  // the pool drops that connection and opens a new one on the next query.
  pool.on("error", options.onIdleError ?? (() => {}));
  // pg-pool listens only while a connection is idle. A checked-out one that loses its server
  // between statements (inside a transaction, no query active) emits 'error' with no listener and
  // crashes the process; with this no-op the next statement fails instead, and the pool drops the
  // broken connection on release (it is no longer queryable).
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    const { schema, applied } = await migrateUnderLock(db, options.schema);
    return { db, pool, schema, applied, close: () => db.destroy() };
  } catch (error) {
    await db.destroy();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot open PostgreSQL ${redact(url)}: ${reason}`, { cause: error });
  }
}

/** The URL's connection settings; an unreadable URL fails here without echoing its secrets. */
function parsedUrl(url: string): pg.ClientConfig {
  try {
    return parseIntoClientConfig(url);
  } catch {
    throw new Error(`cannot open PostgreSQL ${redact(url)}: the database URL cannot be parsed`);
  }
}

/**
 * Runs the migrations while holding a session-level advisory lock on a fixed key, so replicas that
 * start together migrate exactly once: the first applies, the others wait and then find nothing to
 * do. Kysely's Migrator locks too, but only around applying migrations; it first creates its own
 * bookkeeping tables (and here our schema) with `CREATE … IF NOT EXISTS`, which PostgreSQL does not
 * make safe against a concurrent twin (it can fail on the catalog's unique index). The lock covers
 * all of it, whatever locking a given Kysely version does inside. The lock lives on one pooled
 * connection; if that connection dies, PostgreSQL releases the lock with it.
 */
async function migrateUnderLock(
  db: Kysely<Database>,
  wantedSchema: string | undefined,
): Promise<{ schema: string; applied: string[] }> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
    try {
      if (wantedSchema) await sql`create schema if not exists ${sql.id(wantedSchema)}`.execute(conn);
      const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(conn);
      const schema = rows[0]?.schema;
      if (!schema) {
        throw new Error("no schema on the connection's search_path exists; create it or fix the search_path");
      }
      if (wantedSchema && schema !== wantedSchema) {
        // pg lets `options` in the URL override the one set here.
        throw new Error(`the URL's search_path selects schema ${schema}, not ${wantedSchema}`);
      }
      return { schema, applied: await migrateToLatest(conn, `schema ${schema}`, schema) };
    } finally {
      await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
    }
  });
}

/**
 * int8 (`bigint`) comes back from pg as a string by default, because it may exceed 2^53. Ours are
 * millisecond times, versions, epochs and counts: far below that. The parser is set on this pool's
 * own type table, not pg's global defaults, so other pg users in the process are unaffected; a value
 * that would lose precision fails loudly instead of being rounded.
 */
function int8AsNumber(): pg.CustomTypesConfig {
  const types = new pg.TypeOverrides();
  types.setTypeParser(pg.types.builtins.INT8, (text: string) => {
    const value = Number(text);
    if (!Number.isSafeInteger(value))
      throw new RangeError(`int8 value ${text} exceeds the safe integer range`);
    return value;
  });
  return types;
}

/** The URL without its password, for error messages. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "the database URL";
  }
}
