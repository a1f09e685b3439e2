import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import {
  MIGRATION_LOCK_KEY,
  openPostgres,
  type PostgresHandle,
} from "../../src/stores/postgres/openPostgres.js";

const URL_VARIABLE = "AWAKEN_TEST_DATABASE_URL";

function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false";
}

/**
 * Why the PostgreSQL tests cannot run here, or null. They may be skipped ONLY outside CI, so a
 * developer without a server can still run the suite; in CI (`CI` set) this returns null and the
 * tests run and fail with `testDatabaseUrl`'s message: a CI run must never pass by skipping them.
 */
export function postgresUnavailable(): string | null {
  if (process.env[URL_VARIABLE] || inCi()) return null;
  return `${URL_VARIABLE} is not set; PostgreSQL tests skipped (outside CI only; in CI they fail)`;
}

/** The test server's URL (`.ci/run` exports it), or a clear error. */
export function testDatabaseUrl(): string {
  const url = process.env[URL_VARIABLE];
  if (url) return url;
  throw new Error(
    `${URL_VARIABLE} is not set: the PostgreSQL tests need a server, e.g. ` +
      `${URL_VARIABLE}=postgres://postgres@127.0.0.1:5432/test (.ci/run exports it)`,
  );
}

/** A schema name no other test (file, worker or run) uses. */
export function freshSchemaName(): string {
  return `awaken_test_${randomBytes(8).toString("hex")}`;
}

/** The test URL with `search_path` set to `schema`, as a deployment would name its schema. */
export function urlWithSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  return parsed.toString();
}

export interface TestPostgres {
  handle: PostgresHandle;
  schema: string;
  /** Empties every table of the schema (not the migration bookkeeping): a fresh store, cheaply. */
  empty(): Promise<void>;
  /** Another pool on the same schema (a second replica); closed by `dispose`. */
  openReplica(): Promise<PostgresHandle>;
  /** Closes every pool and drops the schema. */
  dispose(): Promise<void>;
}

/**
 * A migrated, private schema on the test server, so test files can run in parallel on one
 * database without seeing each other's rows.
 */
export async function openTestPostgres(): Promise<TestPostgres> {
  const url = testDatabaseUrl();
  const schema = freshSchemaName();
  const handle = await openPostgres(url, { schema, maxConnections: 4 }).catch(async (error: unknown) => {
    await dropSchema(url, schema); // it may have been created before the failure
    throw error;
  });
  const replicas: PostgresHandle[] = [];
  return {
    handle,
    schema,
    empty: async () => {
      const { rows } = await sql<{ name: string }>`
        select tablename as name from pg_tables where schemaname = ${schema} and tablename not like 'kysely_%'`.execute(
        handle.db,
      );
      // DELETE, not TRUNCATE: the tables hold a few rows, and a TRUNCATE makes new files for every
      // table and index (0.6-0.8 s for this schema on a busy server, against 0.1-0.2 s), once per
      // property run. No table has a foreign key, so the order does not matter.
      await handle.db.transaction().execute(async (tx) => {
        for (const r of rows) await sql`delete from ${sql.id(schema, r.name)}`.execute(tx);
      });
    },
    openReplica: async () => {
      const replica = await openPostgres(url, { schema, maxConnections: 4 });
      replicas.push(replica);
      return replica;
    },
    dispose: async () => {
      await Promise.all([handle, ...replicas].map((h) => h.close()));
      await dropSchema(url, schema);
    },
  };
}

/**
 * An empty schema (nothing migrated) and a URL that selects it, for tests that start the server
 * the way an operator would: from a URL alone. `url` defaults to the shared test server.
 */
export async function emptySchema(
  url = testDatabaseUrl(),
): Promise<{ schema: string; url: string; drop(): Promise<void> }> {
  const schema = freshSchemaName();
  await withClient(url, (client) => client.query(`create schema ${pg.escapeIdentifier(schema)}`));
  return {
    schema,
    url: urlWithSchema(url, schema),
    drop: () => dropSchema(url, schema),
  };
}

/**
 * Drops a test schema under the migration lock: other test files migrate their own schemas in the
 * same database at the same time, and Kysely's Migrator fails if a schema vanishes while it looks.
 */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, async (client) => {
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
    } finally {
      await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  });
}

async function withClient(url: string, fn: (client: pg.Client) => Promise<unknown>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}
