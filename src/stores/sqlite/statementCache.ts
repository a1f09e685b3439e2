import type { Database as RawDatabase, Statement } from "better-sqlite3";
import type { SqliteDatabase } from "kysely";

/**
 * Kysely's SQLite driver prepares every statement anew; preparing costs more than running our
 * small queries. The product issues a few dozen distinct SQL texts, so a bounded map of prepared
 * statements removes that cost. better-sqlite3 statements are reusable and, on one connection
 * driven by Kysely's mutex, never used concurrently.
 */
export function withStatementCache(raw: RawDatabase, capacity = 500): SqliteDatabase {
  const cache = new Map<string, Statement>();
  return {
    close: () => {
      cache.clear();
      raw.close();
    },
    prepare: (sql: string) => {
      let statement = cache.get(sql);
      if (!statement) {
        statement = raw.prepare(sql);
        if (cache.size >= capacity) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement as unknown as ReturnType<SqliteDatabase["prepare"]>;
    },
  };
}
