// The three deployments the bench compares. Each `start` brings one up on an empty store and
// registers everything it created on the scope; it returns the URL clients use, a function that
// counts the store's durable writes (bench/storeCounts.mjs) and the pids of the `awaken` processes it
// started (their CPU time is reported per turn, bench/cpuTime.mjs).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshSchema } from "./postgres.mjs";
import { startAwaken } from "./processes.mjs";
import { statementSnapshot } from "./statementCounts.mjs";
import { postgresCounts, sqliteCounts } from "./storeCounts.mjs";

export const API_KEY = "bench";
const SERVER_READY = /listening on (http:\/\/\S+)/;
const WORKER_READY = /Awaken worker (\S+) is running/;
const REMOTE_WORKERS = 2;

/**
 * Worker slots for a concurrency level: at least one per concurrent session, so a turn never waits
 * for a slot (the bench measures the platform, not an undersized pool), and at least the default 4.
 */
const slotsFor = (concurrency) => Math.max(4, concurrency);

function tempDir(scope) {
  const dir = mkdtempSync(join(tmpdir(), "awaken-bench-"));
  scope.defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function startServer(scope, { dataDir, databaseUrl, workers, env = {} }) {
  const args = ["up", "--port", "0", "--data-dir", dataDir, "--workers", String(workers)];
  if (databaseUrl) args.push("--database-url", databaseUrl);
  // On PostgreSQL the server counts its statements into this file (bench/statementCounts.mjs).
  const countsFile = join(dataDir, "statement-counts.json");
  const { child, match } = await startAwaken(scope, {
    label: "awaken up",
    args,
    env: {
      AWAKEN_API_KEY: API_KEY,
      ...(databaseUrl ? { AWAKEN_BENCH_COUNT_STATEMENTS: countsFile } : {}),
      ...env,
    },
    ready: SERVER_READY,
  });
  const statements = databaseUrl ? () => statementSnapshot(child.pid, countsFile) : undefined;
  return { url: match[1], pid: child.pid, statements };
}

export const TOPOLOGIES = {
  sqlite: {
    label: "SQLite all-in-one",
    backend: "sqlite",
    describe: (c) => `up --data-dir <tmp> --workers ${slotsFor(c)}`,
    async start(scope, { concurrency }) {
      const dataDir = tempDir(scope);
      const { url, pid } = await startServer(scope, { dataDir, workers: slotsFor(concurrency) });
      return { url, pids: [pid], counts: () => sqliteCounts(join(dataDir, "awaken.db")) };
    },
  },
  pg: {
    label: "PostgreSQL, in-process workers",
    backend: "postgres",
    describe: (c) => `up --database-url <schema> --workers ${slotsFor(c)}`,
    async start(scope, { concurrency, databaseUrl }) {
      const { url: schemaUrl } = await freshSchema(scope, databaseUrl);
      // The data dir stays empty here (the API key comes from the environment); a temp dir keeps
      // the server from creating ./.awaken in the repository.
      const { url, pid, statements } = await startServer(scope, {
        dataDir: tempDir(scope),
        databaseUrl: schemaUrl,
        workers: slotsFor(concurrency),
      });
      return { url, pids: [pid], counts: () => postgresCounts(schemaUrl), statements };
    },
  },
  "pg-remote": {
    label: `PostgreSQL, ${REMOTE_WORKERS} remote workers`,
    backend: "postgres",
    describe: (c) =>
      `up --database-url <schema> --workers 0 + ${REMOTE_WORKERS}× worker --concurrency ${remoteSlots(c)}`,
    async start(scope, { concurrency, databaseUrl }) {
      const { url: schemaUrl } = await freshSchema(scope, databaseUrl);
      // The same token on the server and the workers; it must differ from the API key.
      const token = randomBytes(24).toString("hex");
      const { url, pid, statements } = await startServer(scope, {
        dataDir: tempDir(scope),
        databaseUrl: schemaUrl,
        workers: 0,
        env: { AWAKEN_WORKER_TOKEN: token },
      });
      const workers = await startRemoteWorkers(scope, url, token, concurrency);
      return {
        url,
        pids: [pid, ...workers.map((w) => w.child.pid)],
        counts: () => postgresCounts(schemaUrl),
        statements,
        transportCalls: () => routeCallsServed(url, "/v1/awaken/worker"),
      };
    },
  },
  "pg-split": {
    label: `PostgreSQL split: control + coordinator + ${REMOTE_WORKERS} remote workers`,
    backend: "postgres",
    describe: (c) =>
      `control + coordinator --database-url <schemas> + ${REMOTE_WORKERS}× worker --concurrency ${remoteSlots(c)}`,
    async start(scope, { concurrency, databaseUrl }) {
      const { url: controlSchemaUrl } = await freshSchema(scope, databaseUrl);
      const { url: schemaUrl } = await freshSchema(scope, databaseUrl);
      const controlToken = randomBytes(24).toString("hex");
      const workerToken = randomBytes(24).toString("hex");
      const coordinatorPort = await freePort();
      const control = await startAwaken(scope, {
        label: "awaken control",
        args: [
          "control",
          "--port",
          "0",
          "--data-dir",
          tempDir(scope),
          "--database-url",
          controlSchemaUrl,
          "--coordinator-url",
          `http://127.0.0.1:${coordinatorPort}`,
        ],
        env: { AWAKEN_API_KEY: API_KEY, AWAKEN_CONTROL_TOKEN: controlToken },
        ready: SERVER_READY,
      });
      // The coordinator counts its statements (Control's, a few per session, are not counted).
      const dataDir = tempDir(scope);
      const countsFile = join(dataDir, "statement-counts.json");
      const coordinator = await startAwaken(scope, {
        label: "awaken coordinator",
        args: [
          "coordinator",
          "--port",
          String(coordinatorPort),
          "--data-dir",
          dataDir,
          "--database-url",
          schemaUrl,
          "--control-url",
          control.match[1],
        ],
        env: {
          AWAKEN_CONTROL_TOKEN: controlToken,
          AWAKEN_WORKER_TOKEN: workerToken,
          AWAKEN_BENCH_COUNT_STATEMENTS: countsFile,
        },
        ready: SERVER_READY,
      });
      const url = coordinator.match[1];
      const workers = await startRemoteWorkers(scope, url, workerToken, concurrency);
      return {
        url,
        pids: [control.child.pid, coordinator.child.pid, ...workers.map((w) => w.child.pid)],
        counts: () => postgresCounts(schemaUrl),
        statements: () => statementSnapshot(coordinator.child.pid, countsFile),
        linkCalls: () => linkCallsServed(control.match[1]),
      };
    },
  },
};

/** The remote workers of a level, started in parallel; each prints its banner once the coordinator accepted its token. */
function startRemoteWorkers(scope, url, token, concurrency) {
  return Promise.all(
    Array.from({ length: REMOTE_WORKERS }, (_, i) =>
      startAwaken(scope, {
        label: `awaken worker ${i + 1}`,
        args: [
          "worker",
          "--coordinator-url",
          url,
          "--concurrency",
          String(remoteSlots(concurrency)),
          "--id",
          `bench-${i + 1}`,
        ],
        env: { AWAKEN_WORKER_TOKEN: token },
        ready: WORKER_READY,
      }),
    ),
  );
}

/** A port nothing listens on now (the coordinator's, which Control must know before it starts). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Slots per remote worker: together at least `slotsFor(c)`. */
function remoteSlots(concurrency) {
  return Math.ceil(slotsFor(concurrency) / REMOTE_WORKERS);
}

/** Internal RPC calls Control has answered so far, from its own `/metrics` (every route is counted). */
async function linkCallsServed(controlUrl) {
  const calls = await routeCallsServed(controlUrl, "/internal/v1/rpc");
  return Object.values(calls).reduce((sum, n) => sum + n, 0);
}

/**
 * Requests a server has answered so far on each route under `prefix`, from its own `/metrics`
 * (`awaken_http_requests_total`, summed over methods and statuses).
 */
export async function routeCallsServed(serverUrl, prefix) {
  const text = await (await fetch(new URL("/metrics", serverUrl))).text();
  const calls = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("awaken_http_requests_total{")) continue;
    const route = /route="([^"]*)"/.exec(line)?.[1];
    if (!route?.startsWith(prefix)) continue;
    const name = route.slice(prefix.length) || route;
    calls[name] = (calls[name] ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return calls;
}
