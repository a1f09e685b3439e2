// The raw five-commit floor of the peer workload: per run, five sequential single-row INSERTs,
// each its own autocommitted transaction (one per step of the workload), on `concurrency`
// connections of the same PostgreSQL, in a fresh schema dropped afterwards. No platform can commit
// the workload's five steps faster than this machine commits five rows one after another.
import pg from "pg";
import { benchArgs } from "./args.mjs";
import { inChild, timeRuns } from "./peerRuns.mjs";
import { freshSchema, withClient } from "./postgres.mjs";
import { withScope } from "./scope.mjs";

const STEPS = 5;
// About the size of a small step's JSON body (bench/rawCommits.mjs uses the same).
const BODY = JSON.stringify({ type: "bench.raw", content: [{ type: "text", text: "x".repeat(160) }] });

/** runs/s (and this client's CPU per run) of five sequential autocommitted inserts per run. */
export function measureFloor({ databaseUrl, concurrency, runs }) {
  return withScope(async (scope) => {
    const { url } = await freshSchema(scope, databaseUrl, "awaken_bench_floor");
    return inChild(import.meta.url, { url, concurrency, runs });
  });
}

async function child({ url, concurrency, runs }) {
  await withClient(url, (client) =>
    client.query(
      "create table scratch (id bigint generated always as identity primary key, body text not null, created_at bigint not null)",
    ),
  );
  const idle = [];
  for (let i = 0; i < concurrency; i++) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    idle.push(client);
  }
  try {
    return await timeRuns({
      concurrency,
      runs,
      runOne: async () => {
        const client = idle.pop();
        try {
          for (let step = 0; step < STEPS; step++)
            await client.query({
              name: "bench_floor_insert",
              text: "insert into scratch (body, created_at) values ($1, $2)",
              values: [BODY, Date.now()],
            });
        } finally {
          idle.push(client);
        }
      },
    });
  } finally {
    await Promise.allSettled(idle.map((client) => client.end()));
  }
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain && process.argv.includes("--child")) {
  const args = benchArgs(import.meta.url, {
    child: { type: "boolean" },
    url: { type: "string" },
    concurrency: { type: "string" },
    runs: { type: "string" },
  });
  const figures = await child({
    url: args.url,
    concurrency: Number(args.concurrency),
    runs: Number(args.runs),
  });
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
