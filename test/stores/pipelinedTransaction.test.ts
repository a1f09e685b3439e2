import { CompiledQuery, sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pipelinedTransaction } from "../../src/stores/postgres/pipelinedTransaction.js";
import { openTestPostgres, postgresUnavailable, type TestPostgres } from "../support/postgresFixtures.js";

// The batching under the PostgreSQL hot paths: a batch must mean what its statements sent one by
// one mean, inside one transaction that is kept whole or not at all.
let fixture: TestPostgres | undefined;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  fixture = await openTestPostgres();
  await sql`create table pipelined (n int primary key)`.execute(fixture.handle.db);
});
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

const insert = (n: number) => CompiledQuery.raw("insert into pipelined (n) values ($1) returning n", [n]);
const kept = async () => {
  const { rows } = await sql<{ n: number }>`select n from pipelined order by n`.execute(fixture!.handle.db);
  return rows.map((r) => r.n);
};

describe("pipelinedTransaction", () => {
  it("runs the statements of each batch in order, in one transaction, and keeps it when it commits", async () => {
    const seen = await pipelinedTransaction(fixture!.handle.pool, async (tx) => {
      const [first, second] = await tx.send([insert(1), insert(2)]);
      // A later statement of the same transaction sees the earlier ones; another connection not yet.
      const [count] = await tx.send([CompiledQuery.raw("select count(*)::int as n from pipelined")]);
      expect(await kept()).toEqual([]);
      await tx.send([insert(3)], "commit");
      return [first, second, count];
    });
    expect(seen).toEqual([[{ n: 1 }], [{ n: 2 }], [{ n: 2 }]]);
    expect(await kept()).toEqual([1, 2, 3]);
  });

  it("commits what an earlier batch wrote when the callback returns without committing", async () => {
    await pipelinedTransaction(fixture!.handle.pool, async (tx) => {
      await tx.send([insert(1)]);
    });
    expect(await kept()).toEqual([1]);
  });

  it("keeps nothing when a statement of the committing batch fails, even what earlier batches wrote", async () => {
    const attempt = pipelinedTransaction(fixture!.handle.pool, async (tx) => {
      await tx.send([insert(1)]);
      await tx.send([insert(2), insert(2), insert(3)], "commit");
    });
    await expect(attempt).rejects.toMatchObject({ code: "23505" });
    expect(await kept()).toEqual([]);
  });

  it("keeps nothing when a statement of an earlier batch fails or the callback throws", async () => {
    await expect(
      pipelinedTransaction(fixture!.handle.pool, async (tx) => {
        await tx.send([insert(1), CompiledQuery.raw("select 1 / 0")]);
      }),
    ).rejects.toMatchObject({ code: "22012" });
    await expect(
      pipelinedTransaction(fixture!.handle.pool, async (tx) => {
        await tx.send([insert(1)]);
        throw new Error("decided against it");
      }),
    ).rejects.toThrow("decided against it");
    expect(await kept()).toEqual([]);
    // The connections went back to the pool clean: new transactions work.
    await pipelinedTransaction(fixture!.handle.pool, (tx) => tx.send([insert(4)], "commit"));
    expect(await kept()).toEqual([4]);
  });
});
