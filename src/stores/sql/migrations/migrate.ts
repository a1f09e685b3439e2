import { type Kysely, sql } from "kysely";
import { DEFAULT_MIGRATION_TABLE, Migrator } from "kysely/migration";
import { migrationProvider } from "./index.js";

/**
 * Brings a database to the latest migration and returns the names this call applied (empty when it
 * was already current). A failed migration throws: a server must not start on a half-known schema.
 *
 * `migrationTableSchema` pins Kysely's bookkeeping tables to one PostgreSQL schema. Without it
 * Kysely looks for them in every schema of the database, so a second schema in the same database
 * (another deployment, a test) would be taken as already migrated.
 */
export async function migrateToLatest<DB>(
  db: Kysely<DB>,
  where: string,
  migrationTableSchema?: string,
): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName;
    throw new Error(
      `migration ${failed ? `${failed} ` : ""}failed for ${where}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}

/**
 * The migrations recorded as applied in a database, read only: unlike Kysely's Migrator it creates
 * nothing, so it can look at a database before anything migrates it. Meant for SQLite (one schema):
 * on PostgreSQL the table lookup would match any schema, and `migrateToLatest` reports exactly.
 */
export async function recordedMigrations<DB>(db: Kysely<DB>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((t) => t.name === DEFAULT_MIGRATION_TABLE)) return [];
  const { rows } = await sql<{
    name: string;
  }>`select name from ${sql.table(DEFAULT_MIGRATION_TABLE)} order by name`.execute(db);
  return rows.map((r) => r.name);
}
