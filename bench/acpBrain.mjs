// ACP Brain cost: what an `acp:fake` agent (the scripted harness of test/support/acp, installed from
// a loopback npm registry as its environment's package, launched in the session's bwrap sandbox)
// costs against a native agent on the offline model, all against one `awaken up` process (SQLite).
//
//   launch   the first turn of a session: its harness installed, launched, handshaken, prompted.
//            `first ever` = a fresh data dir (the package is installed during session creation);
//            `restarted` = the first session of a new server process on that data dir (package
//            prepared); `later` = the other sessions of the first server (package prepared),
//            created back to back with native sessions (the bwrap warm pool, 2 sandboxes refilled a
//            second after a session's first command, is often empty); `pool refilled` = more of them,
//            each after a pause long enough for the pool to refill (a pre-started sandbox taken). Server clocks: from the user.message's processed_at to each launch stage's
//            processed_at (GET /v1/awaken/sessions/:id/harness) and to the end_turn idle's; they
//            leave out HTTP, SSE and the client. Client clocks: send → end_turn idle over SSE, and
//            sessions.create alone, and the two together.
//   warm     the second turn of each of those sessions (its harness alive): send → end_turn.
//   vs native the same trivial turn ("say ok") on a warm acp:fake session and on a warm session of a
//            native agent (claude-sonnet-4-6, no provider key: the offline model), interleaved, in
//            the same environment; and session creation + first turn for both, as separate rows.
//
// Run `npm run build` first (`npm run bench:acp` does both); it uses dist/. Needs bubblewrap (the
// harness runs in the session's sandbox). Everything it starts is stopped at the end.
//
//   node bench/acpBrain.mjs [--sessions N] [--turns N]
//   --sessions   acp:fake sessions on the first server, and as many native ones (default 10)
//   --turns      timed "say ok" turns of each kind in the warm comparison (default 20)
import { mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Anthropic from "@anthropic-ai/sdk";
import { HARNESS_PACKAGE, serveHarnessPackage } from "./acpHarnessPackage.mjs";
import { benchArgs } from "./args.mjs";
import { startAwaken, stopProcess } from "./processes.mjs";
import { withScope } from "./scope.mjs";

const values = benchArgs(import.meta.url, {
  sessions: { type: "string", default: "10" },
  turns: { type: "string", default: "20" },
});
const SESSIONS = Number(values.sessions);
const TURNS = Number(values.turns);
if (!Number.isInteger(SESSIONS) || SESSIONS < 2) fail("--sessions must be an integer of at least 2");
if (!Number.isInteger(TURNS) || TURNS < 1) fail("--turns must be a positive integer");

const { bwrapAvailable } = await import("../dist/sandbox/bwrapTier.js");
if (!(await bwrapAvailable())) {
  console.log("acp brain bench skipped: bubblewrap is not installed (apt-get install -y bubblewrap)");
  process.exit(0);
}

const API_KEY = "sk-bench-acp-brain-0123456789";
const TURN_TIMEOUT_MS = 120_000;
const STAGES = ["installing", "launching", "initializing", "ready"];
const say = (message) => process.stderr.write(`[acp bench] ${message}\n`);

function fail(message) {
  process.stderr.write(`acpBrain.mjs: ${message}\n`);
  process.exit(2);
}

const loadAverage = () =>
  loadavg()
    .map((load) => load.toFixed(1))
    .join(" ");
function quantile(samples, q) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
const p50 = (samples) => quantile(samples, 0.5);
const p95 = (samples) => quantile(samples, 0.95);
const ms = (value) => (value === undefined || Number.isNaN(value) ? "—" : value.toFixed(0));
const at = (event) => Date.parse(event.processed_at);

async function timed(fn) {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

async function startServer(scope, dataDir, served) {
  const { child, match } = await startAwaken(scope, {
    label: "awaken up",
    args: ["up", "--port", "0", "--data-dir", dataDir, "--acp-runtimes", served.runtimesFile],
    env: {
      AWAKEN_API_KEY: API_KEY,
      HOME: process.env.HOME,
      npm_config_registry: served.registry.url,
      npm_config_fetch_retries: "0",
    },
    ready: /listening on (http:\/\/\S+)/,
  });
  const url = match[1];
  return { child, url, client: new Anthropic({ baseURL: url, apiKey: API_KEY, maxRetries: 0 }) };
}

/** The environment both kinds of agent run in, and one agent of each kind. */
async function setUp(client) {
  const environment = await client.beta.environments.create({
    name: "bench-acp",
    config: {
      type: "cloud",
      packages: { type: "packages", npm: [`${HARNESS_PACKAGE}@1.0.0`] },
      sandbox: { provisioning: "eager" },
    },
  });
  // The same, less the package: a session of it may take a pre-started sandbox from the warm pool,
  // which one with packages cannot (their bind is fixed when bwrap starts).
  const plain = await client.beta.environments.create({
    name: "bench-plain",
    config: { type: "cloud", sandbox: { provisioning: "eager" } },
  });
  const tools = [
    { type: "agent_toolset_20260401", default_config: { permission_policy: { type: "always_allow" } } },
  ];
  const acp = await client.beta.agents.create({ name: "bench-acp", model: "acp:fake", tools });
  const native = await client.beta.agents.create({ name: "bench-native", model: "claude-sonnet-4-6", tools });
  return { environment: environment.id, plain: plain.id, acp: acp.id, native: native.id };
}

/** One turn, client-clocked: the stream is opened before the send so no event is missed. */
async function turn(client, sessionId, text) {
  const stream = await client.beta.sessions.events.stream(sessionId);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stream.controller.abort();
  }, TURN_TIMEOUT_MS);
  try {
    const events = stream[Symbol.asyncIterator]();
    const started = performance.now();
    await client.beta.sessions.events.send(sessionId, {
      events: [{ type: "user.message", content: [{ type: "text", text }] }],
    });
    for (;;) {
      const { value, done } = await events.next();
      if (done) throw new Error(`the stream of ${sessionId} ended before its turn did`);
      if (value.type === "session.error") say(`session ${sessionId}: ${JSON.stringify(value.error)}`);
      if (value.type !== "session.status_idle") continue;
      if (value.stop_reason?.type !== "end_turn")
        throw new Error(`turn on ${sessionId} stopped with ${JSON.stringify(value.stop_reason)}`);
      return performance.now() - started;
    }
  } catch (error) {
    if (timedOut) throw new Error(`turn on ${sessionId} did not end within ${TURN_TIMEOUT_MS} ms`);
    throw error;
  } finally {
    clearTimeout(timer);
    stream.controller.abort();
  }
}

/** Each turn's user.message → end_turn idle, from the committed history (server clock). */
async function serverTurns(client, sessionId) {
  const turns = [];
  let message = null;
  for await (const event of client.beta.sessions.events.list(sessionId, { limit: 100 })) {
    if (event.type === "user.message") message = event;
    else if (event.type === "session.status_idle" && event.stop_reason?.type === "end_turn" && message) {
      turns.push(at(event) - at(message));
      message = null;
    }
  }
  return turns;
}

/** The first launch's stages, each as ms after the first user.message. */
async function launchStages(server, sessionId) {
  const response = await fetch(`${server.url}/v1/awaken/sessions/${sessionId}/harness`, {
    headers: { "x-api-key": API_KEY },
  });
  if (!response.ok) throw new Error(`harness stages of ${sessionId}: HTTP ${response.status}`);
  const { data } = await response.json();
  let message;
  for await (const event of server.client.beta.sessions.events.list(sessionId, { limit: 10 })) {
    if (event.type === "user.message") {
      message = event;
      break;
    }
  }
  const stages = {};
  for (const stage of data) stages[stage.stage] ??= at(stage) - at(message);
  for (const stage of STAGES)
    if (stages[stage] === undefined) throw new Error(`${sessionId}: no ${stage} stage`);
  return stages;
}

/** A new session of `agent` and its first turn, then a second (warm) one; every clock of both. */
async function launchedSession(server, ids, agent, kind, environment = ids.environment) {
  const created = await timed(() =>
    server.client.beta.sessions.create({ agent: ids[agent], environment_id: environment }),
  );
  const id = created.value.id;
  const first = await turn(server.client, id, "say ok");
  const warm = await turn(server.client, id, "say ok again");
  const [serverFirst, serverWarm] = await serverTurns(server.client, id);
  const stages = kind === "acp" ? await launchStages(server, id) : null;
  return { id, create: created.ms, first, warm, serverFirst, serverWarm, stages };
}

const launch = { firstEver: null, restarted: null, later: [], pooled: [], native: [], nativePlain: [] };
/** Long enough for the warm pool to refill after the sessions before (it waits 1 s, then starts one). */
const POOL_REFILL_PAUSE_MS = 3_000;
const compare = { acp: [], native: [], acpServer: [], nativeServer: [] };
const loadAtStart = loadAverage();
const scratch = await mkdtemp(join(tmpdir(), "bench-acp-brain-"));
try {
  await withScope(async (scope) => {
    say("packing the scripted harness and serving it on a loopback registry");
    const served = await serveHarnessPackage(scratch);
    scope.defer(() => served.registry.close());
    const dataDir = join(scratch, "data");

    say("fresh server on a fresh data dir");
    const first = await startServer(scope, dataDir, served);
    const ids = await setUp(first.client);
    launch.firstEver = await launchedSession(first, ids, "acp", "acp");
    // Interleaved, so both kinds see the same machine.
    for (let i = 1; i < SESSIONS; i++) {
      say(`session ${i + 1}/${SESSIONS} of each kind`);
      launch.later.push(await launchedSession(first, ids, "acp", "acp"));
      launch.native.push(await launchedSession(first, ids, "native", "native"));
      launch.nativePlain.push(await launchedSession(first, ids, "native", "native", ids.plain));
    }
    launch.native.push(await launchedSession(first, ids, "native", "native"));
    launch.nativePlain.push(await launchedSession(first, ids, "native", "native", ids.plain));
    for (let i = 1; i < SESSIONS; i++) {
      say(`session ${i}/${SESSIONS - 1} after a pause (warm pool refilled)`);
      await new Promise((resolve) => setTimeout(resolve, POOL_REFILL_PAUSE_MS));
      launch.pooled.push(await launchedSession(first, ids, "acp", "acp"));
    }

    say(`warm comparison: ${TURNS} "say ok" turns on each kind, interleaved`);
    const acpSession = launch.later.at(-1).id;
    const nativeSession = launch.native.at(-1).id;
    for (let i = 0; i < TURNS; i++) {
      compare.acp.push(await turn(first.client, acpSession, "say ok"));
      compare.native.push(await turn(first.client, nativeSession, "say ok"));
    }
    // Its first two turns were the launch rows' own.
    compare.acpServer = (await serverTurns(first.client, acpSession)).slice(2);
    compare.nativeServer = (await serverTurns(first.client, nativeSession)).slice(2);

    say("restarting the server on the same data dir");
    await stopProcess(first.child);
    const second = await startServer(scope, dataDir, served);
    launch.restarted = await launchedSession(second, ids, "acp", "acp");
  });
} finally {
  await rm(scratch, { recursive: true, force: true });
}

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

console.log(
  `\nACP Brain bench, ${new Date().toISOString()}: Node ${process.version}, ${cpus().length} CPUs, load average ` +
    `${loadAtStart} at the start and ${loadAverage()} at the end (client, server, sandboxes and harnesses share ` +
    `the machine; a busy machine inflates every figure). ${SESSIONS} acp:fake sessions, ${SESSIONS} native.`,
);

// Launch: one row per single session, p50 / p95 rows for the later ones.
console.log(
  "\nHarness launch, first turn of a session, ms. Server clock from the user.message's processed_at: " +
    "→launching (sandbox provisioned), →initializing (process spawned), →ready (ACP handshake), →end_turn (prompt " +
    "answered). Client clock: create = sessions.create alone; send→end_turn = the first turn alone (no creation); " +
    "create+turn = both.",
);
const launchRow = (name, pick) => [
  name,
  ms(pick((s) => s.create)),
  ms(pick((s) => s.stages.launching)),
  ms(pick((s) => s.stages.initializing)),
  ms(pick((s) => s.stages.ready)),
  ms(pick((s) => s.serverFirst)),
  ms(pick((s) => s.first)),
  ms(pick((s) => s.create + s.first)),
];
const one = (session) => (f) => f(session);
const over = (sessions, q) => (f) => q(sessions.map(f));
table(
  [
    "acp:fake session",
    "create",
    "→launching",
    "→initializing",
    "→ready",
    "→end_turn",
    "send→end_turn",
    "create+turn",
  ],
  [
    launchRow("first ever (fresh data dir: package installed in create)", one(launch.firstEver)),
    launchRow("first on a restarted server (package prepared)", one(launch.restarted)),
    launchRow(`later, same server p50 (${launch.later.length})`, over(launch.later, p50)),
    launchRow(`later, same server p95 (${launch.later.length})`, over(launch.later, p95)),
    launchRow(`later, pool refilled p50 (${launch.pooled.length})`, over(launch.pooled, p50)),
    launchRow(`later, pool refilled p95 (${launch.pooled.length})`, over(launch.pooled, p95)),
  ],
);

const all = [launch.firstEver, ...launch.later, ...launch.pooled, launch.restarted];
console.log(
  `\nWarm turn (the harness alive: each session's second turn, ${all.length} sessions), ms. ` +
    "Server = user.message → end_turn processed_at; client = send → end_turn over SSE.",
);
table(
  ["acp:fake second turn", "p50", "p95", "first ever", "restarted"],
  [
    [
      "server",
      ms(p50(all.map((s) => s.serverWarm))),
      ms(p95(all.map((s) => s.serverWarm))),
      ms(launch.firstEver.serverWarm),
      ms(launch.restarted.serverWarm),
    ],
    [
      "client",
      ms(p50(all.map((s) => s.warm))),
      ms(p95(all.map((s) => s.warm))),
      ms(launch.firstEver.warm),
      ms(launch.restarted.warm),
    ],
  ],
);

console.log(
  `\nacp:fake against native (offline model), same environment, ms. Warm rows: ${TURNS} "say ok" turns each on one ` +
    "session already past two turns, interleaved (no session creation). Creation rows: sessions.create + the " +
    `first turn (client), ${launch.later.length} acp:fake (the later sessions above) and ${launch.native.length} native; ` +
    "the last rows' native sessions are in an environment without the package (either kind may take a pooled " +
    "sandbox when the pool has one).",
);
const ratioRow = (name, acp, native) => [
  name,
  ms(p50(acp)),
  ms(p50(native)),
  (p50(acp) / p50(native)).toFixed(1),
  ms(p95(acp)),
  ms(p95(native)),
  (p95(acp) / p95(native)).toFixed(1),
];
table(
  ["turn", "acp p50", "native p50", "× p50", "acp p95", "native p95", "× p95"],
  [
    ratioRow("warm turn, server msg→end_turn", compare.acpServer, compare.nativeServer),
    ratioRow("warm turn, client send→end_turn", compare.acp, compare.native),
    ratioRow(
      "first turn alone, server msg→end_turn",
      launch.later.map((s) => s.serverFirst),
      launch.native.map((s) => s.serverFirst),
    ),
    ratioRow(
      "first turn alone, client send→end_turn",
      launch.later.map((s) => s.first),
      launch.native.map((s) => s.first),
    ),
    ratioRow(
      "session create alone, client",
      launch.later.map((s) => s.create),
      launch.native.map((s) => s.create),
    ),
    ratioRow(
      "create + first turn, client",
      launch.later.map((s) => s.create + s.first),
      launch.native.map((s) => s.create + s.first),
    ),
    ratioRow(
      "first turn alone, client; native pooled",
      launch.later.map((s) => s.first),
      launch.nativePlain.map((s) => s.first),
    ),
    ratioRow(
      "create + first turn, client; native pooled",
      launch.later.map((s) => s.create + s.first),
      launch.nativePlain.map((s) => s.create + s.first),
    ),
  ],
);
