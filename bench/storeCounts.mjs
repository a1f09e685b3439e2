// Counts the durable write transactions of the platform from what they leave in the database, so
// the bench needs no hook in the product. Taken before and after the timed part; the difference
// is what the timed turns wrote. The tables are the same on both backends
// (src/stores/sql/migrations/; `events` is a view over `commits`).
//
// Counted: every fenced commit stores one commits row naming its run (one commit_operations row
// when it appends no facts); every send is one input-ledger
// transaction, and each of the bench's sends carries exactly one event (user.message or
// user.custom_tool_result); every claim advances its run's epoch by one. Not counted (invisible
// afterwards): lease renewals (every lease/3 = 5 s, rarer than turns here) and releases.
import pg from "pg";

const QUERIES = {
  fenced:
    "select (select count(*) from commits where run_id is not null) + (select count(*) from commit_operations) as n",
  inputs: "select count(*) as n from events where type in ('user.message', 'user.custom_tool_result')",
  claims: "select coalesce(sum(epoch), 0) as n from runs",
  facts: "select count(*) as n from events",
};

/** Reads the counts from the server's SQLite file (read-only; WAL lets it read while the server writes). */
export async function sqliteCounts(file) {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(
      Object.entries(QUERIES).map(([name, sql]) => [name, Number(db.prepare(sql).get().n)]),
    );
  } finally {
    db.close();
  }
}

/** Reads the counts from the schema `url` selects (search_path). */
export async function postgresCounts(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const counts = {};
    for (const [name, sql] of Object.entries(QUERIES)) {
      const { rows } = await client.query(sql);
      counts[name] = Number(rows[0].n); // count(*) is int8, which pg returns as a string
    }
    return counts;
  } finally {
    await client.end();
  }
}

export function difference(after, before) {
  return Object.fromEntries(Object.keys(QUERIES).map((name) => [name, after[name] - before[name]]));
}

/** Durable write transactions: fenced commits + input appends + claims. */
export const commitsOf = (counts) => counts.fenced + counts.inputs + counts.claims;
