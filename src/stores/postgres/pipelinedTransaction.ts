import type { CompiledQuery } from "kysely";
import type pg from "pg";
import { statementName } from "./statementNames.js";

/** The transaction mode of every store transaction on PostgreSQL (see `begin` in sql/db.ts). */
const BEGIN = "start transaction isolation level read committed";

/**
 * One READ COMMITTED transaction on one pooled connection whose statements are sent in batches:
 * the statements of a batch leave in ONE socket write and are answered in one round trip (node-pg's
 * pipeline mode, enabled on the pool by `openPostgres`), instead of one write and one round trip
 * each. The server still runs them one after the other, in order, each seeing the effects (and
 * holding the locks) of the ones before it, so a batch means exactly what the same statements sent
 * one by one mean. What a batch cannot do is let JavaScript decide between two of its statements:
 * anything a decision needs is read in one batch, and the writes it decides on go in the next.
 *
 * `BEGIN` travels with the first batch and `COMMIT` with the last (`send(…, "commit")`). If any
 * statement of the committing batch fails, the transaction is aborted and that `COMMIT` ends it as a
 * ROLLBACK, so nothing of it is kept; a failure in any other batch rolls back explicitly.
 *
 * The statements are prepared (see `statementName`), so their texts must come in few shapes: a
 * statement whose text grows with its data (a VALUES list per row) should pass arrays instead.
 */
export class PipelinedTransaction {
  private state: "new" | "open" | "done" = "new";

  constructor(private readonly client: pg.PoolClient) {}

  /** True while the transaction is open on the server (begun, neither committed nor rolled back). */
  get isOpen(): boolean {
    return this.state === "open";
  }

  /**
   * Sends `queries` as one batch and waits for all of them; returns their rows in order. Throws the
   * first failure (after every result of the batch has arrived, so none is left dangling).
   */
  async send(queries: readonly Statement[], end?: "commit"): Promise<unknown[][]> {
    if (this.state === "done") throw new Error("the transaction has ended");
    const begin = this.state === "new";
    const stream = (this.client as unknown as pg.Client).connection.stream;
    // Cork: the messages of every query of the batch go out in a single write.
    stream.cork();
    const sent: Promise<pg.QueryResult>[] = [];
    try {
      if (begin) sent.push(this.client.query(BEGIN));
      for (const q of queries) {
        const name = q.name ?? statementName(q.sql);
        sent.push(this.client.query({ ...(name ? { name } : {}), text: q.sql, values: [...q.parameters] }));
      }
      if (end) sent.push(this.client.query("commit"));
    } finally {
      stream.uncork();
    }
    this.state = end ? "done" : "open";
    const settled = await Promise.allSettled(sent);
    const failed = settled.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;
    const results = settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value.rows);
    return results.slice(begin ? 1 : 0, begin ? queries.length + 1 : queries.length);
  }

  /** Commits an open transaction (a transaction that wrote nothing too: it ends it). */
  async commit(): Promise<void> {
    if (this.state !== "open") return;
    this.state = "done";
    await this.client.query("commit");
  }
}

/**
 * Runs `fn` in a pipelined transaction on a connection of `pool`. The transaction commits when `fn`
 * returns without having committed, and rolls back when `fn` throws. A connection that failed
 * (its server went away, a rollback could not be sent) is destroyed instead of returned to the pool.
 */
export async function pipelinedTransaction<T>(
  pool: pg.Pool,
  fn: (tx: PipelinedTransaction) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const tx = new PipelinedTransaction(client);
  let broken: Error | undefined;
  try {
    const result = await fn(tx);
    await tx.commit();
    return result;
  } catch (error) {
    if (tx.isOpen) {
      try {
        await client.query("rollback");
      } catch (rollbackFailed) {
        broken = rollbackFailed instanceof Error ? rollbackFailed : new Error(String(rollbackFailed));
      }
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * A statement to send: a compiled Kysely query fits, or hand-written SQL with `$n` placeholders.
 * `name`, when given, must name this one text for the life of the process.
 */
export interface Statement {
  sql: string;
  parameters: readonly unknown[];
  name?: string;
}

/**
 * Builds SQL text with numbered placeholders: `$(value)` appends the value and returns its
 * placeholder, so the text stays the same for every call with the same shape.
 */
export function placeholders(): { $: (value: unknown) => string; parameters: unknown[] } {
  const parameters: unknown[] = [];
  return {
    $: (value: unknown) => {
      parameters.push(value);
      return `$${parameters.length}`;
    },
    parameters,
  };
}

/** The rows of a compiled query's result, typed as the query builder declared them. */
export function rowsOf<R>(_query: CompiledQuery<R>, rows: unknown[] | undefined): R[] {
  return (rows ?? []) as R[];
}
