#!/usr/bin/env node
// The store-level yardstick for the commit fence: the rate of fenced
// commits, claim+settle cycles and input appends through the product's real stores, against the raw
// single-row INSERT commit rate of the same database, measured in the same run. No HTTP, no
// runtime, no model: what the stores themselves cost per durable write.
//
// Usage: npm run build && node bench/fence.mjs [--backends pg,sqlite] [--concurrency 1,8]
//                                              [--seconds 3] [--operations commit,cycle,append]
//                                              [--repeat 1] [--slices 6]
//   PostgreSQL  AWAKEN_BENCH_DATABASE_URL, else AWAKEN_TEST_DATABASE_URL, else
//               postgres://postgres@127.0.0.1:5432/test; every measurement runs in a fresh schema,
//               dropped afterwards. Stores opened as src/cli/storage.ts does (openPostgres with its
//               default pool + the coordinator bundle).
//   SQLite      a file in a fresh temp dir, opened by openSqlite (the product's pragmas) with the
//               synchronous hot paths (sqliteCoordinatorStores).
//
// Operations, each with `c` concurrent writers for `--seconds`:
//   commit        each writer owns a claimed run on its own session/thread and loops
//                 dispatch.commit(2 facts) at the advancing version, same epoch (no settle);
//   claim+settle  writers loop claim → commit(2 facts, settle done) over runs queued (untimed) in
//                 short rounds on many sessions (a version conflict is retried, as the runtime does);
//   input append  each writer loops ledger.append(one user.message, remembered for retries) on
//                 its own session.
// The yardstick is measured interleaved with each operation: the measured time is cut into
// `--slices` slices, and each slice runs the operation and the raw INSERTs one after the other
// (alternating which goes first), so both sides see the same moments of a shared machine. Each
// side warms up, untimed, before its first slice; both stay open (connections, prepared
// statements) between slices.
// "stmts/op" counts SQL statements sent per operation, BEGIN and COMMIT included (SQLite:
// prepared-statement executions); "round trips/op" counts the socket writes to PostgreSQL (one per
// statement, or per pipelined batch of statements).
// Results go to stdout (a Markdown table); progress goes to stderr.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { EMPTY_USAGE } from "../dist/coordinator/facts.js";
import { systemClock } from "../dist/kernel/clock.js";
import { newId } from "../dist/kernel/ids.js";
import { openPostgres } from "../dist/stores/postgres/openPostgres.js";
import { postgresCoordinatorStores } from "../dist/stores/postgres/postgresStores.js";
import { openSqlite } from "../dist/stores/sqlite/openSqlite.js";
import { sqliteCoordinatorStores } from "../dist/stores/sqlite/sqliteStores.js";
import { benchArgs } from "./args.mjs";
import { benchDatabaseUrl, freshSchema, redact, withClient } from "./postgres.mjs";
import { openRawPostgres, openRawSqlite, WARMUP_SECONDS } from "./rawCommits.mjs";
import { withScope } from "./scope.mjs";

const GOAL = 0.5;
const GOAL_CONCURRENCY = 8;
/** Long enough that no lease lapses during a measurement. */
const LEASE_MS = 3_600_000;

const values = benchArgs(import.meta.url, {
  backends: { type: "string", default: "pg,sqlite" },
  concurrency: { type: "string", default: "1,8" },
  seconds: { type: "string", default: "3" },
  operations: { type: "string", default: "commit,cycle,append" },
  repeat: { type: "string", default: "1" },
  slices: { type: "string", default: "6" },
});
const backends = values.backends.split(",").map((b) => b.trim());
for (const b of backends) if (b !== "pg" && b !== "sqlite") fail(`unknown backend "${b}" (pg, sqlite)`);
const levels = values.concurrency.split(",").map(Number);
if (levels.some((c) => !Number.isInteger(c) || c < 1)) fail("--concurrency must list positive integers");
const seconds = Number(values.seconds);
if (!(seconds > 0)) fail("--seconds must be a positive number");
// On a shared machine one reading says little (the raw rate alone moves by 2.5x between readings):
// --repeat runs the whole set N times and judges the goal on the median ratio.
const repeat = Number(values.repeat);
if (!Number.isInteger(repeat) || repeat < 1) fail("--repeat must be a positive integer");
// The raw yardstick swings by tens of percent from one second to the next on a shared machine:
// measured in one block before and one after, it drifted from the operation it was compared with.
// Interleaved in slices, both sides sample the same conditions.
const slices = Number(values.slices);
if (!Number.isInteger(slices) || slices < 1) fail("--slices must be a positive integer");
const databaseUrl = benchDatabaseUrl();

function fail(message) {
  console.error(`bench/fence: ${message}`);
  process.exit(2);
}

const say = (message) => process.stderr.write(`[fence] ${message}\n`);

// ---------------------------------------------------------------------------------------------
// Statement counting, without hooks in the product: every PostgreSQL statement goes through
// pg.Client#query (the pool's clients are pg.Clients, and this is the same `pg` module dist/ loads);
// every SQLite one through a better-sqlite3 Statement (Kysely's and the synchronous paths' alike,
// the transaction wrappers' BEGIN and COMMIT included).

const counter = { on: false, statements: 0, writes: 0 };
const pgQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  if (counter.on) counter.statements++;
  return pgQuery.apply(this, args);
};
// Round trips: socket writes to the database server (node-pg writes the messages of one query, or
// of one pipelined batch of queries, in one write, and waits for the answer before the next one).
const databasePort = Number(new URL(databaseUrl).port || 5432);
for (const method of ["_write", "_writev"]) {
  const original = net.Socket.prototype[method];
  net.Socket.prototype[method] = function countedWrite(...args) {
    if (counter.on && this.remotePort === databasePort) counter.writes++;
    return original.apply(this, args);
  };
}
{
  const probe = new Database(":memory:");
  const statementPrototype = Object.getPrototypeOf(probe.prepare("select 1"));
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = statementPrototype[method];
    statementPrototype[method] = function countedStatement(...args) {
      if (counter.on) counter.statements++;
      return original.apply(this, args);
    };
  }
  probe.close();
}

// ---------------------------------------------------------------------------------------------
// Fixtures, through the stores' own ports.

const AGENT = {
  workspaceId: "wrkspc_bench",
  agentId: "agent_bench",
  version: 1,
  fingerprint: "f",
  publishedAt: 0,
  definition: {
    name: "bench",
    description: null,
    system: null,
    model: { id: "offline-bench" },
    tools: [],
    mcp_servers: [],
    skills: [],
    metadata: {},
    multiagent: null,
    execution_identity: null,
  },
};
// About the size of the raw yardstick's row body.
const TEXT = "x".repeat(160);

async function createEnvironment(stores) {
  const now = Date.now();
  const id = newId("env", now);
  await stores.environments.create({
    id,
    workspaceId: AGENT.workspaceId,
    name: "bench",
    description: null,
    scope: null,
    metadata: {},
    config: { type: "self_hosted" },
    revision: 1,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  });
  return id;
}

async function createSession(stores, environmentId) {
  const now = Date.now();
  const session = {
    id: newId("sesn", now),
    workspaceId: AGENT.workspaceId,
    agent: AGENT,
    environmentId,
    environmentRevision: 1,
    threadId: newId("sthr", now),
    title: null,
    metadata: {},
    resources: [],
    vaultIds: [],
    budget: null,
    status: "idle",
    pending: [],
    usage: { ...EMPTY_USAGE },
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  };
  await stores.sessions.create(session);
  return session;
}

/** Queues one run on the session through the ledger (no fact), available from `availableAt`. */
async function queueRun(stores, sessionId, availableAt) {
  await stores.ledger.append(
    sessionId,
    () => ({ facts: [], effects: [{ kind: "start", runId: newId("run", availableAt) }], echoIds: [] }),
    availableAt,
  );
}

function agentFacts(count) {
  const now = Date.now();
  return Array.from({ length: count }, () => ({
    id: newId("sevt", now),
    type: "agent.message",
    body: { content: [{ type: "text", text: TEXT }] },
  }));
}

const versionOf = (activation) => activation.history.at(-1)?.seq ?? 0;

/** Setup work `job(0..count-1)` on 8 lanes at once; resolves to the results in order. */
async function inParallel(count, job) {
  const results = new Array(count);
  await Promise.all(
    Array.from({ length: Math.min(8, count) }, async (_, lane) => {
      for (let n = lane; n < count; n += 8) results[n] = await job(n);
    }),
  );
  return results;
}

/**
 * Runs `lanes` loops for `--seconds` of measured time, interleaved slice by slice with the raw
 * yardstick `raw` (see the header); each lane returns how many operations it completed. A lane may
 * stop early (its supply ran out): then `prepare` (untimed, uncounted) refills the supply and the
 * lanes run again, until the slice's measured time is complete.
 */
async function timed(raw, lanes, prepare = null) {
  // Warm-up, untimed and uncounted, for both sides: the first fraction of a second runs on cold
  // code (no JIT yet, statements not yet prepared on every connection of the pool) and would
  // otherwise count against whichever side has more code.
  if (prepare) await prepare();
  const warmUntil = performance.now() + WARMUP_SECONDS * 1000;
  await Promise.all(lanes.map((lane) => lane(warmUntil)));
  await raw(performance.now() + WARMUP_SECONDS * 1000);
  counter.statements = 0;
  counter.writes = 0;
  const slice = seconds / slices;
  let ops = 0;
  let elapsed = 0;
  let rawCommits = 0;
  let rawElapsed = 0;
  const runOurs = async () => {
    let sliceElapsed = 0;
    while (sliceElapsed < slice) {
      if (prepare) await prepare();
      const started = performance.now();
      const deadline = started + (slice - sliceElapsed) * 1000;
      counter.on = true;
      try {
        ops += (await Promise.all(lanes.map((lane) => lane(deadline)))).reduce((a, b) => a + b, 0);
      } finally {
        counter.on = false;
      }
      sliceElapsed += (performance.now() - started) / 1000;
      if (!prepare) break;
    }
    elapsed += sliceElapsed;
  };
  const runRaw = async () => {
    const started = performance.now();
    rawCommits += await raw(started + slice * 1000);
    rawElapsed += (performance.now() - started) / 1000;
  };
  for (let k = 0; k < slices; k++) {
    // Alternating which side goes first, so neither always follows the other's tail.
    const [first, second] = k % 2 === 0 ? [runOurs, runRaw] : [runRaw, runOurs];
    await first();
    await second();
  }
  return {
    rate: ops / elapsed,
    raw: rawCommits / rawElapsed,
    ops,
    elapsed,
    statementsPerOp: counter.statements / ops,
    roundTripsPerOp: counter.writes / ops,
  };
}

// ---------------------------------------------------------------------------------------------
// The three operations. `stores` is a coordinator bundle on an empty database.

async function measureCommits(stores, concurrency, raw) {
  const environmentId = await createEnvironment(stores);
  for (let i = 0; i < concurrency; i++) {
    const session = await createSession(stores, environmentId);
    await queueRun(stores, session.id, Date.now());
  }
  const activations = [];
  for (let i = 0; i < concurrency; i++) {
    const activation = await stores.dispatch.claim(`bench-writer-${i}`, LEASE_MS);
    if (!activation) throw new Error("setup: a queued run was not claimable");
    activations.push(activation);
  }
  // Kept across the warm-up and the measurement: each writer goes on from where it stopped.
  const versions = activations.map(versionOf);
  return timed(
    raw,
    activations.map((a, i) => async (deadline) => {
      let version = versions[i];
      let ops = 0;
      while (performance.now() < deadline) {
        const result = await stores.dispatch.commit({
          opId: `op_${a.runId}_v${version}`,
          runId: a.runId,
          threadId: a.threadId,
          owner: a.owner,
          epoch: a.epoch,
          expectedVersion: version,
          facts: agentFacts(2),
        });
        if (!result.ok) throw new Error(`commit rejected: ${JSON.stringify(result.rejection)}`);
        version = result.receipt.versionAfter;
        versions[i] = version;
        ops++;
      }
      return ops;
    }),
  );
}

async function measureClaimSettle(stores, concurrency, raw) {
  // Runs are queued in rounds of a few per writer, so the queue stays as short as a served one (a
  // claim sorts the runnable runs it finds: a queue of thousands would measure that, not the
  // fence). Within a round they are claimed in available_at order, round-robin over the sessions,
  // so concurrent writers almost always hold runs of different threads (a clash is retried below);
  // with twice as many sessions as a round's runs, a claim's history stays short.
  const environmentId = await createEnvironment(stores);
  const perRound = 16 * concurrency;
  const sessions = await inParallel(2 * perRound, () => createSession(stores, environmentId));
  let queued = 0;
  let conflicts = 0;
  const refill = async () => {
    const base = Date.now() - 10 * perRound;
    await inParallel(perRound, (n) =>
      queueRun(stores, sessions[(queued + n) % sessions.length].id, base + n),
    );
    queued += perRound;
  };
  const result = await timed(
    raw,
    Array.from({ length: concurrency }, (_, i) => async (deadline) => {
      let ops = 0;
      while (performance.now() < deadline) {
        const a = await stores.dispatch.claim(`bench-cycler-${i}`, LEASE_MS);
        if (!a) break; // this round's runs are spent
        let version = versionOf(a);
        for (;;) {
          const r = await stores.dispatch.commit({
            opId: `op_${a.runId}_v${version}`,
            runId: a.runId,
            threadId: a.threadId,
            owner: a.owner,
            epoch: a.epoch,
            expectedVersion: version,
            facts: agentFacts(2),
            settle: "done",
          });
          if (r.ok) break;
          if (r.rejection.kind !== "version_conflict") {
            throw new Error(`settle rejected: ${JSON.stringify(r.rejection)}`);
          }
          conflicts++;
          version = r.rejection.currentVersion;
        }
        ops++;
      }
      return ops;
    }),
    refill,
  );
  return { ...result, note: `${conflicts} version conflicts retried; queued ${perRound} runs per round` };
}

async function measureAppends(stores, concurrency, raw) {
  const environmentId = await createEnvironment(stores);
  const sessions = [];
  for (let i = 0; i < concurrency; i++) sessions.push(await createSession(stores, environmentId));
  return timed(
    raw,
    sessions.map((session) => async (deadline) => {
      let ops = 0;
      while (performance.now() < deadline) {
        const now = Date.now();
        const fact = {
          id: newId("sevt", now),
          type: "user.message",
          body: { content: [{ type: "text", text: TEXT }] },
        };
        // As SessionService.send does: the echo is remembered under the request's hash.
        const requestHash = createHash("sha256").update(fact.id).digest("hex");
        await stores.ledger.append(
          session.id,
          () => ({ facts: [fact], effects: [], echoIds: [fact.id], requestHash }),
          now,
        );
        ops++;
      }
      return ops;
    }),
  );
}

const ALL_OPERATIONS = [
  { name: "fenced commit (2 facts)", key: "commit", run: measureCommits },
  { name: "claim+settle (2 facts)", key: "cycle", run: measureClaimSettle },
  { name: "input append (1 fact)", key: "append", run: measureAppends },
];
const wanted = values.operations.split(",").map((o) => o.trim());
for (const o of wanted) {
  if (!ALL_OPERATIONS.some((op) => op.key === o)) fail(`unknown operation "${o}" (commit, cycle, append)`);
}
const OPERATIONS = ALL_OPERATIONS.filter((op) => wanted.includes(op.key));

// ---------------------------------------------------------------------------------------------
// Backends: each measurement opens the stores on an empty database and closes them after.

function withPostgresStores(fn) {
  return withScope(async (scope) => {
    const { url } = await freshSchema(scope, databaseUrl, "awaken_bench_fence");
    const handle = await openPostgres(url);
    scope.defer(() => handle.close());
    return fn(postgresCoordinatorStores(handle, systemClock));
  });
}

function withSqliteStores(fn) {
  return withScope(async (scope) => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-bench-fence-"));
    scope.defer(() => rmSync(dir, { recursive: true, force: true }));
    const handle = await openSqlite(join(dir, "awaken.db"));
    scope.defer(() => handle.close());
    return fn(sqliteCoordinatorStores(handle, systemClock));
  });
}

const BACKENDS = {
  pg: {
    label: "PostgreSQL",
    withStores: withPostgresStores,
    openRaw: (scope, c) => openRawPostgres(scope, databaseUrl, c),
  },
  sqlite: {
    label: "SQLite",
    withStores: withSqliteStores,
    // One writer whatever the concurrency (see rawSqliteCommits).
    openRaw: (scope) => openRawSqlite(scope),
  },
};

// ---------------------------------------------------------------------------------------------

const fixed = (x, digits) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
const percent = (x) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–");

console.log(
  `Awaken fence benchmark, ${new Date().toISOString()}: Node ${process.version}, ${cpus().length} CPUs ` +
    `(${cpus()[0]?.model ?? "?"}), load average ${loadavg()[0].toFixed(2)} at start; ${seconds} s per ` +
    `measurement; concurrency ${levels.join(", ")}`,
);
if (backends.includes("pg")) {
  const version = await withClient(databaseUrl, async (client) => {
    const { rows } = await client.query(
      "select current_setting('server_version') as v, current_setting('synchronous_commit') as s",
    );
    return `${rows[0].v}, synchronous_commit=${rows[0].s}`;
  });
  console.log(`PostgreSQL ${version} at ${redact(databaseUrl)}`);
}

const rows = [];
for (let reading = 1; reading <= repeat; reading++) {
  const readingLabel = repeat > 1 ? `[reading ${reading}/${repeat}] ` : "";
  for (const name of backends) {
    const backend = BACKENDS[name];
    for (const c of levels) {
      for (const operation of OPERATIONS) {
        say(
          `${readingLabel}${name} c=${c}: ${operation.name}, in ${slices} slices alternating with raw INSERTs`,
        );
        const result = await withScope(async (scope) => {
          const raw = await backend.openRaw(scope, c);
          return backend.withStores((stores) => operation.run(stores, c, raw));
        });
        rows.push({
          reading,
          backend: backend.label,
          key: operation.key,
          c,
          operation: operation.name,
          rate: result.rate,
          stmts: result.statementsPerOp,
          trips: name === "pg" ? result.roundTripsPerOp : Number.NaN,
          raw: result.raw,
          note: result.note,
        });
        console.log(
          `${backend.label} c=${c}: ${operation.key} ${fixed(result.rate, 0)}/s (${result.ops} in ` +
            `${fixed(result.elapsed, 1)} s${result.note ? `; ${result.note}` : ""}), raw ${fixed(result.raw, 0)}/s ` +
            `in the slices between: ${percent(result.rate / result.raw)}`,
        );
      }
    }
  }
}

console.log("");
console.log(`Summary (${new Date().toISOString()}, load average ${loadavg()[0].toFixed(2)} at the end):`);
console.log("");
const readingColumn = repeat > 1 ? ["| reading ", "|---"] : ["", ""];
console.log(
  `${readingColumn[0]}| backend | c | operation | ops/s | stmts/op | round trips/op | raw commits/s | ours/raw |`,
);
console.log(`${readingColumn[1]}|---|---|---|---|---|---|---|---|`);
for (const row of rows) {
  console.log(
    `${repeat > 1 ? `| ${row.reading} ` : ""}| ${row.backend} | ${row.c} | ${row.operation} | ${fixed(row.rate, 0)} | ${fixed(row.stmts, 1)} | ` +
      `${fixed(row.trips, 1)} | ${fixed(row.raw, 0)} | ${percent(row.rate / row.raw)} |`,
  );
}
console.log("");
console.log(
  "raw = plain single-row INSERT commits/s on c connections of the same database (SQLite: one " +
    "connection, its single writer), measured in slices alternating with the operation; stmts/op = SQL " +
    "statements per operation, BEGIN/COMMIT included; round trips/op = socket writes to PostgreSQL " +
    "per operation (a statement, or a pipelined batch of statements, each).",
);
const goalRows = rows.filter((r) => r.key === "commit" && r.c === GOAL_CONCURRENCY);
for (const label of [...new Set(goalRows.map((r) => r.backend))]) {
  const ratios = goalRows.filter((r) => r.backend === label).map((r) => r.rate / r.raw);
  const sorted = [...ratios].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  const readings = ratios.length > 1 ? `readings ${ratios.map(percent).join(", ")}; median ` : "";
  console.log(
    `Goal (fenced commits ≥ ${GOAL * 100}% of raw at c=${GOAL_CONCURRENCY}), ${label}: ` +
      `${readings}${percent(median)} — ${median >= GOAL ? "met" : "missed"}`,
  );
}
