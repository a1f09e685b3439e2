import type { Database as RawDatabase, Statement } from "better-sqlite3";
import type { SqliteDatabase } from "kysely";
import { BoundedCache } from "../../kernel/boundedCache.js";

export type Prepare = (sql: string) => Statement;

/**
 * Kysely's SQLite driver prepares every statement anew; preparing costs more than running our
 * small queries. The product issues a few dozen distinct SQL texts, so a bounded map of prepared
 * statements removes that cost. better-sqlite3 statements are reusable and, on one connection in
 * one thread, never run concurrently.
 */
export function cachedPrepare(raw: RawDatabase, capacity = 500): Prepare {
  const cache = new BoundedCache<string, Statement>({ maxEntries: capacity });
  return (sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = raw.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}

/** The subset of a database Kysely's dialect needs, backed by the shared statement cache. */
export function kyselyDatabase(raw: RawDatabase, prepare: Prepare): SqliteDatabase {
  return {
    close: () => raw.close(),
    prepare: (sql: string) => prepare(sql) as unknown as ReturnType<SqliteDatabase["prepare"]>,
  };
}
