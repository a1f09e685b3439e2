/**
 * A pooled connection that the server terminates while it is checked out but idle (inside a
 * transaction, between statements) must fail that transaction, not crash the process with an
 * unhandled 'error' event; the pool then replaces the connection.
 */
import { sql } from "kysely";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openTestPostgres, postgresUnavailable, type TestPostgres } from "../support/postgresFixtures.js";

let fixture: TestPostgres | undefined;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
});
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

it("a connection terminated mid-transaction fails that transaction and the pool recovers", async () => {
  const { db } = fixture!.handle;
  const other = await fixture!.openReplica();
  const attempt = db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
    // The server ends this backend while no statement of ours is running on it.
    await sql`select pg_terminate_backend(${rows[0]!.pid})`.execute(other.db);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await sql`select 1`.execute(trx);
  });
  await expect(attempt).rejects.toThrow();
  const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
  expect(rows[0]!.one).toBe(1);
});
