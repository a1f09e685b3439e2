#!/usr/bin/env node
// Counts the statements and round trips the platform sends PostgreSQL, from the product side:
// a server started with AWAKEN_BENCH_COUNT_STATEMENTS=<file> counts every statement its pool sends
// (src/stores/postgres/statementCounter.ts) and writes the counts to the file on SIGUSR2. Taken
// before and after the timed part like the store counts; remote workers reach PostgreSQL only
// through the server, so the server's pool is all of the platform's statements.
//
// Run on its own (`node bench/statementCounts.mjs [--topologies pg,pg-remote] [--turns 40]
// [--concurrency 1]`, after `npm run build`) it drives a few turns on each PostgreSQL topology at
// that concurrency and prints the
// statements per turn by kind and the statement goal lines; counts, not timings, so machine noise
// does not change them. PostgreSQL as in bench/turns.mjs.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const WAIT_MS = 5_000;

/** Asks the server `pid` for its counts and waits until it has written a newer snapshot. */
export async function statementSnapshot(pid, file) {
  const seen = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).seq : 0;
  process.kill(pid, "SIGUSR2");
  const deadline = performance.now() + WAIT_MS;
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    try {
      const counts = JSON.parse(readFileSync(file, "utf8"));
      if (counts.seq > seen) return counts;
    } catch {
      // Not written yet, or caught mid-write: read again.
    }
  }
  throw new Error(`the server wrote no statement counts to ${file} within ${WAIT_MS} ms`);
}

/** What the timed part sent: the difference of two snapshots, per kind too. */
export function statementDifference(after, before) {
  const kinds = {};
  for (const [kind, n] of Object.entries(after.kinds)) {
    const delta = n - (before.kinds[kind] ?? 0);
    if (delta > 0) kinds[kind] = delta;
  }
  return {
    statements: after.statements - before.statements,
    roundTrips: after.roundTrips - before.roundTrips,
    named: after.named - before.named,
    kinds,
  };
}

/** The standalone count: a few turns per PostgreSQL topology, their statements per turn by kind. */
async function main() {
  // Loaded here: the modules below import this one for the two functions above.
  const { benchArgs } = await import("./args.mjs");
  const { benchDatabaseUrl } = await import("./postgres.mjs");
  const { summarize } = await import("./report.mjs");
  const { withScope } = await import("./scope.mjs");
  const { TOPOLOGIES } = await import("./topologies.mjs");
  const { runLevel } = await import("./turnDriver.mjs");
  const { turnGoalLines } = await import("./turnGoals.mjs");
  const values = benchArgs(import.meta.url, {
    topologies: { type: "string", default: "pg,pg-remote" },
    turns: { type: "string", default: "40" },
    concurrency: { type: "string", default: "1" },
  });
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error("--concurrency must be a positive integer");
  const databaseUrl = benchDatabaseUrl();
  const rows = [];
  for (const name of values.topologies.split(",").map((n) => n.trim())) {
    const topology = TOPOLOGIES[name];
    if (topology?.backend !== "postgres") throw new Error(`not a PostgreSQL topology: ${name}`);
    const say = (message) => process.stderr.write(`[${name}] ${message}\n`);
    const level = await withScope(async (scope) => {
      const running = await topology.start(scope, { concurrency, databaseUrl });
      return runLevel({ ...running, concurrency, turns: Number(values.turns), progress: say });
    });
    // No raw-commit yardstick here: the ratio lines it feeds are not printed.
    const row = summarize({ topology: name, concurrency, raw: [Number.NaN], level, cores: 1 });
    rows.push(row);
    const sent = row.statements;
    console.log(
      `${name} c=${concurrency}, ${row.turns} turns: ${sent.statements.toFixed(2)} statements per turn in ` +
        `${sent.roundTrips.toFixed(2)} round trips, ${sent.unnamed.toFixed(2)} unnamed, ` +
        `${sent.emptyClaims.toFixed(2)} claims that found nothing`,
    );
    for (const [kind, n] of sent.kinds) console.log(`    ${n.toFixed(2)}  ${kind}`);
  }
  for (const line of turnGoalLines(rows).filter((l) => !/CPU|platform share/.test(l))) console.log(line);
}

// Not awaited at the top: the modules main() loads import this one, which must finish loading first.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  main().catch((error) => {
    process.stderr.write(`statementCounts: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
