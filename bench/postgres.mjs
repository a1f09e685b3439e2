// PostgreSQL helpers: every measurement starts in a schema of its own, selected by search_path in
// the URL exactly as an operator names a schema (test/support/postgresFixtures.ts does the same),
// and the schema is dropped afterwards.
import { randomBytes } from "node:crypto";
import pg from "pg";

/** Same key as src/stores/postgres/openPostgres.ts: replicas (and tests) migrate under it. */
const MIGRATION_LOCK_KEY = 0x4157414b454e;

export function benchDatabaseUrl(env = process.env) {
  return (
    env.AWAKEN_BENCH_DATABASE_URL || env.AWAKEN_TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
  );
}

/** The URL with its password hidden, for progress lines. */
export function redact(url) {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

export function urlWithSchema(url, schema) {
  const parsed = new URL(url);
  parsed.searchParams.set("options", `-c search_path=${schema}`);
  return parsed.toString();
}

export async function withClient(url, fn) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty schema and registers its drop on `scope`. Returns the URL that selects it.
 * The server migrates it on start, as it would a new deployment's schema.
 */
export async function freshSchema(scope, url, prefix = "awaken_bench") {
  const schema = `${prefix}_${randomBytes(6).toString("hex")}`;
  // Registered first: if creation half-succeeds, the drop (if exists) still runs.
  scope.defer(() => dropSchema(url, schema));
  await withClient(url, (client) => client.query(`create schema ${pg.escapeIdentifier(schema)}`));
  return { schema, url: urlWithSchema(url, schema) };
}

/**
 * Drops under the migration lock: a test run or another replica may be migrating a schema of the
 * same database, and Kysely's Migrator fails when a schema vanishes while it lists tables.
 */
async function dropSchema(url, schema) {
  await withClient(url, async (client) => {
    await client.query("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
    } finally {
      await client.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  });
}
