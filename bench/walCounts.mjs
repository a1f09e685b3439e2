// What a measured window cost PostgreSQL in durable writes, read from the WAL itself: bytes of WAL,
// heap row writes (inserts, updates, HOT updates, deletes: the rows a turn writes) and commit
// records. Rows and commits come from pg_walinspect (PostgreSQL 15+, created here if missing; it
// needs a superuser): without it only the bytes are reported. The WAL is the whole cluster's, so
// the window must be one in which only the measured side writes.
import pg from "pg";

const ROW_RECORDS = /^Heap2?\/(INSERT|UPDATE|HOT_UPDATE|DELETE|MULTI_INSERT)/;

export async function openWalCounter(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let inspect = null;
  try {
    await client.query("create extension if not exists pg_walinspect");
    const { rows } = await client.query(
      "select extnamespace::regnamespace::text as ns from pg_extension where extname = 'pg_walinspect'",
    );
    // Its functions live in the schema it was created in, whatever this connection's search_path.
    inspect = rows[0] ? `${rows[0].ns}.pg_get_wal_stats` : null;
  } catch {
    inspect = null;
  }
  const mark = async () => (await client.query("select pg_current_wal_lsn() as lsn")).rows[0].lsn;
  return {
    mark,
    /** WAL bytes, heap row writes and commit records between two marks (rows, commits: null without pg_walinspect). */
    async between(from, to) {
      const { rows } = await client.query("select pg_wal_lsn_diff($1, $2)::bigint as bytes", [to, from]);
      const bytes = Number(rows[0].bytes);
      if (!inspect) return { walBytes: bytes, rowWrites: null, commits: null };
      const stats = await client.query(
        `select "resource_manager/record_type" as kind, count from ${inspect}($1, $2, true)`,
        [from, to],
      );
      let rowWrites = 0;
      let commits = 0;
      for (const { kind, count } of stats.rows) {
        if (ROW_RECORDS.test(kind)) rowWrites += Number(count);
        if (kind.startsWith("Transaction/COMMIT")) commits += Number(count);
      }
      return { walBytes: bytes, rowWrites, commits };
    },
    close: () => client.end(),
  };
}
