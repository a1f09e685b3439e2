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

interface QueuedWrite {
  fn: (sql: SyncSql) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs the hot write paths (claim, fenced commit, input append) as synchronous SQLite
 * transactions. Nothing else can run in between, so these transactions never wait on each other
 * or on readers, which keeps the platform's share of a turn small. They share the connection with
 * Kysely: a Kysely transaction spans awaits, so a write waits until none is open; checking and
 * starting happen in the same tick, so they never nest.
 *
 * Group commit when writes pile up: the first write of an event-loop turn runs at once in a
 * transaction of its own; the writes submitted after it in the same turn run at the turn's end, in
 * the order they were submitted, in ONE transaction, each inside a savepoint of its own (measured
 * at concurrency 8, bench/fence.mjs: +10–40 % fenced commits and input appends per second; an idle
 * server's writes wait for nothing, as before). What costs a SQLite commit is
 * writing the pages it dirtied to the WAL, and the writes of one turn (the commits of every run
 * woken by the same answer, several sessions' inputs) mostly dirty the same pages: the last pages
 * of `events` and of its indexes, the small `threads`, `runs` and `sessions` tables. Each write
 * still sees the ones before it, exactly as if they had run one after the other. A write whose
 * function throws rolls back its own savepoint and rejects with that error; the others are kept.
 * A write resolves only once the transaction that holds it has committed, and if that commit (or
 * the transaction itself) fails, every write of the batch is rejected: none of them landed.
 */
export class SyncWriter {
  private readonly sql: SyncSql;
  private queue: QueuedWrite[] | null = null;
  /** A write already ran at once in this event-loop turn (cleared when the turn ends). */
  private turnTaken = false;
  /** Transactions committed by `write` (one per batch), for tests and benchmarks. */
  transactions = 0;

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

  write<T>(fn: (sql: SyncSql) => T): Promise<T> {
    if (!this.queue && !this.turnTaken && !this.raw.inTransaction) {
      // The first write of a turn runs at once, alone, as every write did before batching: an
      // idle server adds no wait to a write. Only the writes that follow it in the same turn, i.e.
      // under load, wait for the turn's end and share a transaction.
      this.turnTaken = true;
      setImmediate(() => {
        this.turnTaken = false;
      });
      try {
        return Promise.resolve(this.commitAlone(fn));
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      if (!this.queue) {
        this.queue = [];
        setImmediate(() => void this.drain());
      }
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /** A synchronous read; it too waits for an open Kysely transaction, whose writes it would see. */
  async read<T>(fn: (sql: SyncSql) => T): Promise<T> {
    while (this.raw.inTransaction) await nextTurn();
    return fn(this.sql);
  }

  /** One write in a transaction of its own: no savepoint, its failure is the transaction's. */
  private commitAlone<T>(fn: (sql: SyncSql) => T): T {
    const value = this.raw.transaction(() => fn(this.sql)).immediate();
    this.transactions++;
    return value;
  }

  private async drain(): Promise<void> {
    while (this.raw.inTransaction) await nextTurn();
    // Taken only now: writes submitted while a Kysely transaction held the connection join in.
    const batch = this.queue ?? [];
    this.queue = null;
    if (batch.length === 1) {
      const [entry] = batch as [QueuedWrite];
      try {
        entry.resolve(this.commitAlone(entry.fn));
      } catch (error) {
        entry.reject(error);
      }
      return;
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.raw
        .transaction(() => {
          for (const entry of batch) {
            try {
              // Nested in the open transaction, better-sqlite3 makes this a savepoint.
              outcomes.push({ ok: true, value: this.raw.transaction(() => entry.fn(this.sql))() });
            } catch (error) {
              // Some failures (a full disk, I/O errors) roll back the whole transaction, not just
              // the savepoint: nothing after them may run outside it, as autocommit writes.
              if (!this.raw.inTransaction) throw error;
              outcomes.push({ ok: false, error });
            }
          }
        })
        .immediate();
    } catch (error) {
      for (const entry of batch) entry.reject(error);
      return;
    }
    this.transactions++;
    batch.forEach((entry, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) entry.resolve(outcome.value);
      else entry.reject(outcome ? outcome.error : new Error("SyncWriter: a write of the batch did not run"));
    });
  }
}
