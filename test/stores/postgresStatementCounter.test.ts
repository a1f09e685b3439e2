import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPostgres, type PostgresHandle } from "../../src/stores/postgres/openPostgres.js";
import { StatementCounter, statementKind } from "../../src/stores/postgres/statementCounter.js";
import {
  openTestPostgres,
  postgresUnavailable,
  type TestPostgres,
  testDatabaseUrl,
} from "../support/postgresFixtures.js";

let fixture: TestPostgres | undefined;
let counted: PostgresHandle | undefined;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
});
afterEach(async () => {
  await counted?.close();
  counted = undefined;
  await fixture?.dispose();
  fixture = undefined;
});

describe("the PostgreSQL pool's connections", () => {
  it("send Kysely's data statements as named prepared statements, and count statements and round trips", async () => {
    const counter = new StatementCounter();
    counted = await openPostgres(testDatabaseUrl(), {
      schema: fixture!.schema,
      maxConnections: 1,
      statementCounter: counter,
    });
    const before = { statements: counter.statements, roundTrips: counter.roundTrips, named: counter.named };
    for (let i = 0; i < 3; i++) {
      await counted.db.selectFrom("runs").select("id").where("id", "=", `run_${i}`).execute();
    }
    expect(counter.statements - before.statements).toBe(3);
    expect(counter.named - before.named).toBe(3);
    expect(counter.roundTrips - before.roundTrips).toBe(3);
    expect(counter.kinds.get("select runs")).toBe(3);

    // One text, one server-side prepared statement on the connection, however often it ran.
    const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_prepared_statements where statement like 'select "id" from "runs"%'`.execute(
      counted.db,
    );
    expect(rows[0]?.n).toBe(1);

    // Statements sent while one is outstanding on the connection share its round trip.
    const client = await counted.pool.connect();
    try {
      const start = counter.roundTrips;
      await Promise.all([client.query("select 1"), client.query("select 2"), client.query("select 3")]);
      expect(counter.roundTrips - start).toBe(1);
    } finally {
      client.release();
    }
  });

  it("start in READ COMMITTED with the schema on the path from startup options, sending no statement of their own", async () => {
    const counter = new StatementCounter();
    // A URL that asks for another isolation and another path: the pool's own settings still hold.
    const url = new URL(testDatabaseUrl());
    url.searchParams.set("options", "-c default_transaction_isolation=serializable -c search_path=public");
    counted = await openPostgres(url.toString(), {
      schema: fixture!.schema,
      maxConnections: 2,
      statementCounter: counter,
    });
    const clients = [await counted.pool.connect(), await counted.pool.connect()];
    try {
      for (const client of clients) {
        const isolation = await client.query<{ v: string }>(
          "select current_setting('default_transaction_isolation') as v",
        );
        expect(isolation.rows[0]?.v).toBe("read committed");
        const path = await client.query<{ v: string }>("select current_schema() as v");
        expect(path.rows[0]?.v).toBe(fixture!.schema);
      }
    } finally {
      for (const client of clients) client.release();
    }
    expect(counter.kinds.get("set")).toBeUndefined();
  });

  it("label statements by verb and first table", () => {
    expect(statementKind('select * from "events" where "thread_id" = $1')).toBe("select events");
    expect(statementKind("with claimed as (update runs set epoch = epoch + 1) select * from claimed")).toBe(
      "with … update runs",
    );
    expect(statementKind("select pg_notify($1, payload) from unnest($2::text[]) as payload")).toBe(
      "select pg_notify",
    );
    expect(
      statementKind(
        "with ev as (insert into events select 1), nf as (select pg_notify($1, p)) select 1 as ok",
      ),
    ).toBe("with … insert into events");
    expect(statementKind("start transaction isolation level read committed")).toBe("begin");
  });
});
