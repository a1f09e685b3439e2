import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { Migrator } from "kysely/migration";
import { migrationProvider } from "../sql/migrations/index.js";
import type { Database } from "../sql/schema.js";
import { cachedPrepare, kyselyDatabase } from "./statementCache.js";
import { SyncWriter } from "./syncWriter.js";

export interface SqliteHandle {
  db: Kysely<Database>;
  /** Synchronous transactions for the hot write paths (see SyncWriter). */
  writer: SyncWriter;
  close(): Promise<void>;
}

/**
 * Opens (creating if needed) the embedded SQLite authority. WAL keeps readers (stream tails,
 * lists) from blocking the writer; `synchronous=NORMAL` in WAL mode is durable across process
 * crashes (kill -9), which is the failure the all-in-one server must survive.
 */
export async function openSqlite(file: string): Promise<SqliteHandle> {
  if (file !== ":memory:") {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Created 0600 before SQLite opens it: the -wal and -shm files take the database file's mode.
    closeSync(openSync(file, "a", 0o600));
  }
  const raw = new SqliteDatabase(file);
  raw.pragma("journal_mode = WAL");
  raw.pragma("synchronous = NORMAL");
  raw.pragma("busy_timeout = 5000");
  raw.pragma("foreign_keys = ON");
  const prepare = cachedPrepare(raw);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: kyselyDatabase(raw, prepare) }) });
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    throw new Error(`SQLite migration failed for ${file}: ${String(error)}`, { cause: error });
  }
  return { db, writer: new SyncWriter(raw, prepare), close: () => db.destroy() };
}
