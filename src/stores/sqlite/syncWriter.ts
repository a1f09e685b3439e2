import { setImmediate as nextTurn } from "node:timers/promises";
import type { Database as RawDatabase } from "better-sqlite3";
import type { Prepare } from "./statementCache.js";

type Param = string | number | bigint | null;

/** Statement helpers for code running inside a synchronous transaction. */
export interface SyncSql {
  get<T>(sql: string, ...params: Param[]): T | undefined;
  all<T>(sql: string, ...params: Param[]): T[];
  run(sql: string, ...params: Param[]): number;
}

/**
 * Runs the hot write paths (claim, fenced commit, input append) as one synchronous SQLite
 * transaction each. Nothing else can run in between, so these transactions never wait on each
 * other or on readers, which keeps the platform's share of a turn small. They share the connection
 * with Kysely: a Kysely transaction spans awaits, so a write waits until none is open; checking and
 * starting happen in the same tick, so they never nest.
 */
export class SyncWriter {
  private readonly sql: SyncSql;

  constructor(
    private readonly raw: RawDatabase,
    prepare: Prepare,
  ) {
    this.sql = {
      get: <T>(text: string, ...params: Param[]) => prepare(text).get(...params) as T | undefined,
      all: <T>(text: string, ...params: Param[]) => prepare(text).all(...params) as T[],
      run: (text: string, ...params: Param[]) => prepare(text).run(...params).changes,
    };
  }

  async write<T>(fn: (sql: SyncSql) => T): Promise<T> {
    while (this.raw.inTransaction) await nextTurn();
    return this.raw.transaction(() => fn(this.sql)).immediate();
  }

  /** A synchronous read; it too waits for an open Kysely transaction, whose writes it would see. */
  async read<T>(fn: (sql: SyncSql) => T): Promise<T> {
    while (this.raw.inTransaction) await nextTurn();
    return fn(this.sql);
  }
}
