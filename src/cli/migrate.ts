import { existsSync } from "node:fs";
import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { openPostgres, redact } from "../stores/postgres/openPostgres.js";
import { recordedMigrations } from "../stores/sql/migrations/migrate.js";
import { openSqlite } from "../stores/sqlite/openSqlite.js";
import { type StorageOptions, sqliteFile } from "./storage.js";

export interface MigrationReport {
  /** The database migrated (no password). */
  target: string;
  /** Migrations this run applied, in order; empty when the schema was already current. */
  applied: string[];
}

/**
 * `awaken migrate`: brings the database `awaken up` would use to the latest schema and says what it
 * applied. Opening a store migrates it anyway; this lets an operator do it as a separate step
 * (before rolling out replicas, or to check a database) with the same code and the same lock.
 */
export async function migrateDatabase(options: StorageOptions): Promise<MigrationReport> {
  if (options.databaseUrl) {
    const handle = await openPostgres(options.databaseUrl, { maxConnections: 2 });
    await handle.close();
    return {
      target: `PostgreSQL ${redact(options.databaseUrl)} (schema ${handle.schema})`,
      applied: handle.applied,
    };
  }
  const file = sqliteFile(options.dataDir);
  // openSqlite migrates on open and does not report what it applied: compare what the file had
  // recorded before (read only) with what it records after.
  const before = await recordedInSqliteFile(file);
  const handle = await openSqlite(file);
  try {
    const after = await recordedMigrations(handle.db);
    return { target: `SQLite ${file}`, applied: after.filter((name) => !before.includes(name)) };
  } finally {
    await handle.close();
  }
}

async function recordedInSqliteFile(file: string): Promise<string[]> {
  if (!existsSync(file)) return [];
  const db = new Kysely<unknown>({
    dialect: new SqliteDialect({ database: new SqliteDatabase(file, { readonly: true }) }),
  });
  try {
    return await recordedMigrations(db);
  } finally {
    await db.destroy();
  }
}
