// The embedded runtime against its peers on the peer workload (user message → model → tool →
// model → done, every step committed, scripted model), all on the same PostgreSQL in one run:
//   embedded  openAwaken({ databaseUrl }) driven through awaken.beta (bench/peerEmbedded.mjs), each
//             run creating its session on the clock, as a user's run must (and as a DBOS run
//             starts its workflow); the goals are judged on it
//   embedded, sessions before the clock   the same with every session created before the clock
//             starts: the variant that leaves that step out, shown beside it
//   HTTP      `awaken up --database-url` and the official SDK over loopback HTTP, sessions on the
//             clock (bench/peerHttp.mjs)
//   DBOS      @dbos-inc/dbos-sdk in process, one workflow of five durable steps (bench/peerDbos.mjs)
//   floor     five sequential autocommitted single-row INSERTs per run (bench/peerFloor.mjs)
// Each side runs in a child process of its own on a fresh schema, dropped afterwards. Goals, per
// repeat (the ratios are taken within one repeat, then summarised): embedded/DBOS ≥ 1.0 and
// embedded/floor ≥ 0.5 runs/s; machine CPU per run (the side's processes and PostgreSQL's)
// embedded ≤ DBOS and HTTP ≤ 1.5 × DBOS; per run, PostgreSQL's heap row writes ≤ 14 and WAL ≤ 8 kB,
// read from the WAL of the timed window (bench/walCounts.mjs). CPU per run is also shown for each
// side's own processes alone, and the HTTP side's server (`awaken up` + PostgreSQL) without the SDK
// client's process.
//
// Usage: npm run build && node bench/peers.mjs [--concurrency 1,8] [--runs 200] [--repeat 3]
//   [--json file]   also write every figure as JSON (bench reports may read the DBOS CPU per run)
//   [--cluster private|shared]
//                  private (the default as root with Debian's pg_createcluster): the bench makes a
//                  PostgreSQL cluster of its own, so WAL, heap writes and PostgreSQL's CPU are the
//                  measured side's alone even while other clients use the machine's server
//                  (bench/privateCluster.mjs); shared: the server below, on a quiet machine only
//   PostgreSQL     (shared, or AWAKEN_BENCH_DATABASE_URL, which implies shared) AWAKEN_BENCH_DATABASE_URL,
//                  else AWAKEN_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
//   AWAKEN_BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' profiles the child processes.
import { writeFileSync } from "node:fs";
import { benchArgs } from "./args.mjs";
import { measureDbosPeer } from "./peerDbos.mjs";
import { measureEmbedded } from "./peerEmbedded.mjs";
import { measureFloor } from "./peerFloor.mjs";
import { measureHttp } from "./peerHttp.mjs";
import { benchDatabaseUrl, redact } from "./postgres.mjs";
import { privateClusterUnavailable, startPrivateCluster } from "./privateCluster.mjs";
import { Scope } from "./scope.mjs";

const args = benchArgs(import.meta.url, {
  concurrency: { type: "string", default: "1,8" },
  runs: { type: "string", default: "200" },
  repeat: { type: "string", default: "3" },
  json: { type: "string" },
  cluster: { type: "string" },
});
const levels = args.concurrency.split(",").map(Number);
const runs = Number(args.runs);
const repeat = Number(args.repeat);
const log = (line) => process.stderr.write(`${line}\n`);
const scope = new Scope();
const cluster = args.cluster ?? (process.env.AWAKEN_BENCH_DATABASE_URL ? "shared" : "private");
if (!["private", "shared"].includes(cluster)) {
  log(`peers.mjs: --cluster is private or shared, not ${JSON.stringify(cluster)}`);
  process.exit(2);
}
let databaseUrl = benchDatabaseUrl();
if (cluster === "private") {
  const why = privateClusterUnavailable();
  if (why) {
    log(
      `peers.mjs: cannot run a private PostgreSQL cluster (${why}); use --cluster shared on a quiet machine`,
    );
    process.exit(2);
  }
  log("starting the bench's own PostgreSQL cluster");
  const own = await startPrivateCluster(scope).catch(async (error) => {
    await scope.close();
    throw error;
  });
  databaseUrl = own.url;
  // Read by bench/cpuTime.mjs in every side's process: only this cluster's processes are counted.
  process.env.AWAKEN_BENCH_POSTMASTER_PID = String(own.postmasterPid);
}

const SIDES = {
  embedded: measureEmbedded,
  embeddedPrecreated: (options) => measureEmbedded({ ...options, sessions: "precreated" }),
  http: measureHttp,
  dbos: measureDbosPeer,
  floor: measureFloor,
};

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { min: sorted[0], median, max: sorted.at(-1) };
}
const spread = (s, digits = 1) =>
  s.min === s.max
    ? s.median.toFixed(digits)
    : `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;

log(
  `peer workload on PostgreSQL at ${redact(databaseUrl)}: ${runs} timed runs per side, ${repeat} repeat(s)`,
);
const results = [];
try {
  for (const concurrency of levels) {
    const readings = [];
    for (let r = 0; r < repeat; r++) {
      const reading = {};
      // Alternating order between repeats spreads any drift of the machine over every side.
      const order =
        r % 2 === 0
          ? ["embedded", "embeddedPrecreated", "http", "dbos", "floor"]
          : ["floor", "dbos", "http", "embeddedPrecreated", "embedded"];
      for (const side of order) {
        log(`c=${concurrency} repeat ${r + 1}/${repeat}: ${side}`);
        reading[side] = await SIDES[side]({ databaseUrl, concurrency, runs });
      }
      readings.push(reading);
    }
    const of = (side, field) => summary(readings.map((x) => x[side][field] ?? Number.NaN));
    results.push({
      concurrency,
      readings,
      runsPerSec: {
        embedded: of("embedded", "runsPerSec"),
        embeddedPrecreated: of("embeddedPrecreated", "runsPerSec"),
        http: of("http", "runsPerSec"),
        dbos: of("dbos", "runsPerSec"),
        floor: of("floor", "runsPerSec"),
      },
      machineCpuMsPerRun: Object.fromEntries(
        ["embedded", "embeddedPrecreated", "http", "dbos"].map((side) => [
          side,
          of(side, "machineCpuMsPerRun"),
        ]),
      ),
      rowWritesPerRun: Object.fromEntries(
        ["embedded", "embeddedPrecreated", "http", "dbos"].map((side) => [side, of(side, "rowWritesPerRun")]),
      ),
      walBytesPerRun: Object.fromEntries(
        ["embedded", "embeddedPrecreated", "http", "dbos"].map((side) => [side, of(side, "walBytesPerRun")]),
      ),
      commitsPerRun: Object.fromEntries(
        ["embedded", "embeddedPrecreated", "http", "dbos"].map((side) => [side, of(side, "commitsPerRun")]),
      ),
      cpuMsPerRun: {
        embedded: of("embedded", "cpuMsPerRun"),
        embeddedPrecreated: of("embeddedPrecreated", "cpuMsPerRun"),
        dbos: of("dbos", "cpuMsPerRun"),
        floor: of("floor", "cpuMsPerRun"),
      },
      vsDbos: summary(readings.map((x) => x.embedded.runsPerSec / x.dbos.runsPerSec)),
      machineVsDbos: summary(readings.map((x) => x.embedded.machineCpuMsPerRun / x.dbos.machineCpuMsPerRun)),
      httpMachineVsDbos: summary(readings.map((x) => x.http.machineCpuMsPerRun / x.dbos.machineCpuMsPerRun)),
      // The server's own machine CPU: `awaken up` and PostgreSQL, without the SDK client's process.
      httpServerMachine: summary(readings.map((x) => x.http.serverCpuMsPerRun + x.http.postgresCpuMsPerRun)),
      httpServerVsDbos: summary(
        readings.map(
          (x) => (x.http.serverCpuMsPerRun + x.http.postgresCpuMsPerRun) / x.dbos.machineCpuMsPerRun,
        ),
      ),
      vsFloor: summary(readings.map((x) => x.embedded.runsPerSec / x.floor.runsPerSec)),
    });
  }
} finally {
  await scope.close();
}

console.log("\nruns/s: median (min–max) over the repeats");
console.log(
  "| concurrency | embedded (session on the clock) | DBOS | floor (5 raw commits) | embedded/DBOS (goal ≥ 1.0) | embedded/floor (goal ≥ 0.5) | embedded, sessions before the clock |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of results)
  console.log(
    `| ${r.concurrency} | ${spread(r.runsPerSec.embedded)} | ${spread(r.runsPerSec.dbos)} | ${spread(r.runsPerSec.floor)} | ` +
      `${spread(r.vsDbos, 2)} ${r.vsDbos.median >= 1 ? "met" : "NOT met"} | ${spread(r.vsFloor, 2)} ${r.vsFloor.median >= 0.5 ? "met" : "NOT met"} | ` +
      `${spread(r.runsPerSec.embeddedPrecreated)} |`,
  );
console.log("\nCPU ms per run of each side's process: median (min–max)");
console.log(
  "| concurrency | embedded (platform + workers + client, session on the clock) | DBOS | floor client | embedded, sessions before the clock |",
);
console.log("|---|---|---|---|---|");
for (const r of results)
  console.log(
    `| ${r.concurrency} | ${spread(r.cpuMsPerRun.embedded, 2)} | ${spread(r.cpuMsPerRun.dbos, 2)} | ${spread(r.cpuMsPerRun.floor, 2)} | ${spread(r.cpuMsPerRun.embeddedPrecreated, 2)} |`,
  );
console.log(
  `\nMachine CPU ms per run (the side's processes + ${cluster === "private" ? "the bench's own PostgreSQL cluster's" : "every PostgreSQL process's: keep the machine quiet"}): median (min–max)`,
);
console.log(
  "| concurrency | embedded | HTTP server + SDK | DBOS | embedded/DBOS (goal ≤ 1.0) | HTTP/DBOS (goal ≤ 1.5) | embedded, sessions before the clock |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of results) {
  const m = r.machineCpuMsPerRun;
  console.log(
    `| ${r.concurrency} | ${spread(m.embedded, 2)} | ${spread(m.http, 2)} | ${spread(m.dbos, 2)} | ` +
      `${spread(r.machineVsDbos, 2)} ${r.machineVsDbos.median <= 1 ? "met" : "NOT met"} | ` +
      `${spread(r.httpMachineVsDbos, 2)} ${r.httpMachineVsDbos.median <= 1.5 ? "met" : "NOT met"} | ${spread(m.embeddedPrecreated, 2)} |`,
  );
}
console.log(
  "\nThe HTTP side split: the server's machine CPU (`awaken up` + PostgreSQL) without the SDK client's process: median (min–max)",
);
console.log("| concurrency | HTTP server + PostgreSQL | DBOS | server/DBOS |");
console.log("|---|---|---|---|");
for (const r of results)
  console.log(
    `| ${r.concurrency} | ${spread(r.httpServerMachine, 2)} | ${spread(r.machineCpuMsPerRun.dbos, 2)} | ${spread(r.httpServerVsDbos, 2)} |`,
  );
console.log("\nPostgreSQL's durable writes per run, read from its WAL (pg_walinspect): median");
console.log(
  "| concurrency | side | heap row writes (goal ≤ 14) | WAL bytes (goal ≤ 8 192) | commit records | runs/s |",
);
console.log("|---|---|---|---|---|---|");
for (const r of results)
  for (const side of ["embedded", "embeddedPrecreated", "http", "dbos"])
    console.log(
      `| ${r.concurrency} | ${side} | ${spread(r.rowWritesPerRun[side], 1)} | ${spread(r.walBytesPerRun[side], 0)} | ` +
        `${spread(r.commitsPerRun[side], 1)} | ${spread(r.runsPerSec[side])} |`,
    );
if (args.json) writeFileSync(args.json, `${JSON.stringify({ runs, repeat, results }, null, 2)}\n`);
