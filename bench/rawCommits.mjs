// The machine's own limit, the yardstick for the platform's commit rate: plain single-row INSERTs,
// each its own autocommitted transaction, into a scratch table of the same database (PostgreSQL)
// or the same kind of file (SQLite), measured in the same run as the turns.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freshSchema, withClient } from "./postgres.mjs";
import { withScope } from "./scope.mjs";

// About the size of a small event row's JSON body.
const BODY = JSON.stringify({ type: "bench.raw", content: [{ type: "text", text: "x".repeat(160) }] });
/** Untimed warm-up before every measurement, here and in bench/fence.mjs (the same for both sides). */
export const WARMUP_SECONDS = 0.5;

/**
 * PostgreSQL: `concurrency` connections, each looping INSERTs for `seconds`, with the server's own
 * durability settings (synchronous_commit as configured). Concurrent connections let PostgreSQL
 * share one WAL flush among several commits (group commit), which is what the platform's pool of
 * connections can exploit too. Returns commits per second.
 */
export function rawPostgresCommits(databaseUrl, concurrency, seconds) {
  return withScope(async (scope) =>
    warmThenTime(await openRawPostgres(scope, databaseUrl, concurrency), seconds),
  );
}

/**
 * SQLite: one connection on a file in a fresh temp dir, with the pragmas of
 * src/stores/sqlite/openSqlite.ts (WAL, synchronous=NORMAL, busy_timeout, foreign_keys). SQLite
 * admits one writer at a time and better-sqlite3 is synchronous, and the product itself writes
 * through one connection, so one connection inserting back to back IS the ceiling at any
 * concurrency: more connections would only add lock hand-offs (busy waits), not commits. Note that
 * in WAL mode with synchronous=NORMAL a commit does not fsync (checkpoints do), so this figure is
 * CPU-bound, not disk-bound.
 */
export function rawSqliteCommits(seconds) {
  return withScope(async (scope) => warmThenTime(await openRawSqlite(scope), seconds));
}

/**
 * The PostgreSQL yardstick, opened (scratch table, `concurrency` connected clients) but not run:
 * returns `insertUntil(deadline)`, which loops the INSERTs on every connection until `deadline`
 * (a performance.now() time) and resolves to the number of commits. Torn down with `scope`.
 * bench/fence.mjs runs it in slices that alternate with the operation it is compared with.
 */
export async function openRawPostgres(scope, databaseUrl, concurrency) {
  const { url } = await freshSchema(scope, databaseUrl, "awaken_bench_raw");
  await withClient(url, (client) =>
    client.query(
      "create table scratch (id bigint generated always as identity primary key, body text not null, created_at bigint not null)",
    ),
  );
  const clients = [];
  scope.defer(() => Promise.allSettled(clients.map((client) => client.end())));
  for (let i = 0; i < concurrency; i++) {
    const client = new pg.Client({ connectionString: url });
    clients.push(client);
    await client.connect();
  }
  // A named statement is parsed once per connection, as the product's prepared statements are.
  const insert = (client) =>
    client.query({
      name: "bench_raw_insert",
      text: "insert into scratch (body, created_at) values ($1, $2)",
      values: [BODY, Date.now()],
    });
  return async (deadline) => {
    let commits = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          await insert(client);
          commits++;
        }
      }),
    );
    return commits;
  };
}

/** The SQLite yardstick, opened but not run (see `openRawPostgres` and `rawSqliteCommits`). */
export async function openRawSqlite(scope) {
  const dir = mkdtempSync(join(tmpdir(), "awaken-bench-raw-"));
  scope.defer(() => rmSync(dir, { recursive: true, force: true }));
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(join(dir, "raw.db"));
  scope.defer(() => db.close());
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.exec("create table scratch (id integer primary key, body text not null, created_at integer not null)");
  const insert = db.prepare("insert into scratch (body, created_at) values (?, ?)");
  return async (deadline) => {
    let commits = 0;
    while (performance.now() < deadline) {
      insert.run(BODY, Date.now());
      commits++;
    }
    return commits;
  };
}

async function warmThenTime(insertUntil, seconds) {
  await timedLoop(WARMUP_SECONDS, insertUntil);
  return timedLoop(seconds, insertUntil);
}

async function timedLoop(seconds, loop) {
  const started = performance.now();
  const commits = await loop(started + seconds * 1000);
  return commits / ((performance.now() - started) / 1000);
}
