#!/usr/bin/env node
// Turn benchmark: turns/s and turn latency at several concurrency levels
// for three deployments, the platform's durable commits/s against the raw single-row commit rate
// of the same database measured in the same run, commits vs facts per turn, and where a turn's CPU
// goes (the client, the awaken processes, PostgreSQL, the rest of the machine; Linux /proc).
//
// Usage: npm run bench -- [--topologies sqlite,pg,pg-remote,pg-split] [--concurrency 1,8,64] [--turns N]
//                         [--raw-seconds 3] [--repeat 1]
//   --turns        timed turns per level (default max(200, 8 × concurrency), so each of the
//                  concurrent lanes does several turns and the ramp-up/drain stays a small share)
//   --repeat       runs of every topology × level (default 1); the goals show the spread
//   PostgreSQL     AWAKEN_BENCH_DATABASE_URL, else AWAKEN_TEST_DATABASE_URL, else
//                  postgres://postgres@127.0.0.1:5432/test; every level runs in a fresh schema,
//                  dropped afterwards.
//   AWAKEN_BENCH_NODE_ARGS  extra Node options, space-separated, for the awaken processes the bench
//                  starts: '--cpu-prof --cpu-prof-dir=/tmp/prof' profiles them (written on stop).
// Results go to stdout; progress goes to stderr.
import { cpus, loadavg } from "node:os";
import { benchArgs } from "./args.mjs";
import { measureDbosPeer } from "./peerDbos.mjs";
import { benchDatabaseUrl, redact, withClient } from "./postgres.mjs";
import { rawPostgresCommits, rawSqliteCommits } from "./rawCommits.mjs";
import { cpuTable, detailLines, goalLines, summarize, summaryTable } from "./report.mjs";
import { withScope } from "./scope.mjs";
import { TOPOLOGIES } from "./topologies.mjs";
import { runLevel } from "./turnDriver.mjs";
import { CPU_CONCURRENCY, turnGoalLines } from "./turnGoals.mjs";

const values = benchArgs(import.meta.url, {
  topologies: { type: "string", default: Object.keys(TOPOLOGIES).join(",") },
  concurrency: { type: "string", default: "1,8,64" },
  turns: { type: "string" },
  "raw-seconds": { type: "string", default: "3" },
  repeat: { type: "string", default: "1" },
});

const topologies = values.topologies.split(",").map((name) => name.trim());
for (const name of topologies) {
  if (!TOPOLOGIES[name]) fail(`unknown topology "${name}" (known: ${Object.keys(TOPOLOGIES).join(", ")})`);
}
const levels = values.concurrency.split(",").map(Number);
if (levels.some((c) => !Number.isInteger(c) || c < 1)) fail("--concurrency must list positive integers");
if (values.turns !== undefined && !(Number(values.turns) >= 1)) fail("--turns must be a positive number");
const turnsFor = (c) => (values.turns ? Math.floor(Number(values.turns)) : Math.max(200, 8 * c));
const rawSeconds = Number(values["raw-seconds"]);
if (!(rawSeconds > 0)) fail("--raw-seconds must be a positive number");
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) fail("--repeat must be a positive integer");
const databaseUrl = benchDatabaseUrl();
const backends = new Set(topologies.map((name) => TOPOLOGIES[name].backend));

function fail(message) {
  console.error(`bench: ${message}`);
  process.exit(2);
}

/** Progress lines on stderr, stamped with the seconds since this step began. */
const progress = (tag) => {
  const started = performance.now();
  return (message) =>
    process.stderr.write(`[${tag} +${((performance.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
};

console.log(
  `Awaken turn benchmark, ${new Date().toISOString()}: Node ${process.version}, ${cpus().length} CPUs ` +
    `(${cpus()[0]?.model ?? "?"}), load average ${loadavg()[0].toFixed(2)} at start (client, servers and ` +
    `database share the machine); offline model; one custom tool round trip per turn; ` +
    `turns per level: ${levels.map((c) => `c=${c}: ${turnsFor(c)}`).join(", ")}`,
);
if (backends.has("postgres")) {
  const version = await withClient(databaseUrl, async (client) => {
    const { rows } = await client.query("select current_setting('server_version') as v");
    const sync = await client.query("select current_setting('synchronous_commit') as v");
    return `${rows[0].v}, synchronous_commit=${sync.rows[0].v}`;
  });
  console.log(`PostgreSQL ${version} at ${redact(databaseUrl)}`);
}

/**
 * The machine's limit, measured right before and right after each level (with no server running)
 * rather than once per run: the client, the servers and the database share a small machine whose
 * background load varies, so the yardstick is taken under the conditions of the figure it is
 * compared with, and the two readings show how much those conditions drifted.
 */
function rawCommits(backend, concurrency, say) {
  if (backend === "sqlite") {
    // One writer whatever the concurrency (see rawSqliteCommits): the same ceiling for every level.
    say(`raw: single-row INSERT commits for ${rawSeconds} s on one SQLite connection`);
    return rawSqliteCommits(rawSeconds);
  }
  say(`raw: single-row INSERT commits for ${rawSeconds} s on ${concurrency} PostgreSQL connection(s)`);
  return rawPostgresCommits(databaseUrl, concurrency, rawSeconds);
}

/**
 * The in-process DBOS peer on the same PostgreSQL right after the pg level it is compared with, so
 * both see the same machine; a peer that fails leaves the goal unmeasured, not the bench failed.
 */
async function dbosPeer(concurrency, say) {
  try {
    say(`DBOS peer: ${turnsFor(concurrency)} workflows at concurrency ${concurrency}`);
    return await measureDbosPeer({ databaseUrl, concurrency, runs: turnsFor(concurrency) });
  } catch (error) {
    say(`DBOS peer FAILED: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

// Every topology × level on an empty store, torn down before the next one; `repeat` times over, so
// each run measures every topology under the same machine conditions.
const rows = [];
for (let run = 1; run <= repeat; run++)
  for (const name of topologies) {
    const topology = TOPOLOGIES[name];
    for (const concurrency of levels) {
      const say = progress(`${repeat > 1 ? `run ${run} ` : ""}${name} c=${concurrency}`);
      try {
        const rawBefore = await rawCommits(topology.backend, concurrency, say);
        say(`starting: ${topology.describe(concurrency)}`);
        const level = await withScope(async (scope) => {
          const running = await topology.start(scope, { concurrency, databaseUrl });
          const result = await runLevel({
            url: running.url,
            pids: running.pids,
            concurrency,
            turns: turnsFor(concurrency),
            counts: running.counts,
            statements: running.statements,
            linkCalls: running.linkCalls,
            transportCalls: running.transportCalls,
            progress: say,
          });
          say("stopping");
          return result;
        });
        const rawAfter = await rawCommits(topology.backend, concurrency, say);
        const row = summarize({
          topology: name,
          concurrency,
          raw: [rawBefore, rawAfter],
          level,
          cores: cpus().length,
        });
        row.run = run;
        if (name === "pg" && concurrency === CPU_CONCURRENCY) row.dbos = await dbosPeer(concurrency, say);
        rows.push(row);
        for (const line of detailLines(row)) console.log(line);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        say(`FAILED: ${reason}`);
        rows.push({ topology: name, concurrency, run, error: reason });
      }
    }
  }

console.log("");
console.log(`Summary (${new Date().toISOString()}, load average ${loadavg()[0].toFixed(2)} at the end):`);
console.log("");
for (const line of summaryTable(rows)) console.log(line);
console.log("");
console.log(
  "commits = durable write transactions in the timed part (fenced commits + input appends + claims); " +
    "raw = plain single-row INSERT commits/s on as many connections as the level's concurrency, same " +
    "database, the mean of a reading just before and one just after the level (SQLite: one connection, its " +
    "single writer, at every level); " +
    "facts = event rows; p50/p99 = client-observed turn (user.message sent → idle end_turn).",
);
const cpuLines = cpuTable(rows);
if (cpuLines.length > 0) {
  console.log("");
  console.log(
    "Where the timed turns' CPU went (from /proc; awaken = the servers and workers the bench started):",
  );
  console.log("");
  for (const line of cpuLines) console.log(line);
  console.log("");
  console.log(
    "client's cap = had the platform and the database cost nothing, all cores running only this bench's " +
      "client would allow at most cores × 1000 / client ms turns/s, and that many × commits/turn commits/s.",
  );
}
console.log("");
for (const line of goalLines(rows, topologies)) console.log(line);
for (const line of turnGoalLines(rows)) console.log(line);
if (rows.some((row) => row.error)) process.exitCode = 1;
