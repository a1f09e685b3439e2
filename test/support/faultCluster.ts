/**
 * Real processes on a fresh PostgreSQL schema for the fault suite: `awaken up --workers 0`
 * replicas (they execute nothing themselves) and `awaken worker` children, all sharing one worker
 * token. `dispose` kills whatever is left (SIGKILL also ends a SIGSTOPped process) and drops the
 * schema.
 *
 * With AWAKEN_FAULT_TOPOLOGY=split the same suite runs on the split deployment: the replicas are
 * `awaken coordinator`s on that schema, and one `awaken control` (its own schema, started with the
 * first replica) serves them all; Control registers with whichever replica answers.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { emptySchema, postgresUnavailable } from "./postgresFixtures.js";
import { type ServerProcess, startServerProcess } from "./serverProcess.js";
import { CONTROL_TOKEN, freePort } from "./splitCluster.js";
import { TEST_MASTER_KEY } from "./testServer.js";
import { startWorker, type WorkerProcess } from "./workerProcess.js";

export const FAULT_API_KEY = "sk-awaken-fault-suite-key";
export const FAULT_WORKER_TOKEN = "fault-suite-worker-token-0123456789";

export interface FaultCluster {
  /** The fresh schema's URL (`search_path` set), for the invariant checks. */
  databaseUrl: string;
  replicas: ServerProcess[];
  workers: WorkerProcess[];
  startReplica(args?: string[]): Promise<ServerProcess>;
  startWorker(coordinatorUrl: string, env?: NodeJS.ProcessEnv, args?: string[]): Promise<WorkerProcess>;
  dispose(): Promise<void>;
}

/** Which deployment the fault suite runs on: the all-in-one replicas, or the split processes. */
export const FAULT_TOPOLOGY: "all-in-one" | "split" =
  process.env.AWAKEN_FAULT_TOPOLOGY === "split" ? "split" : "all-in-one";

/** The most replicas one split cluster starts (Control is told their addresses up front). */
const SPLIT_REPLICAS = 3;

/** `baseUrl` selects another server than the shared test one (e.g. a private, restartable one). */
export async function startFaultCluster(options: {
  leaseMs: number;
  baseUrl?: string;
}): Promise<FaultCluster> {
  const schema = await emptySchema(options.baseUrl);
  const controlSchema = FAULT_TOPOLOGY === "split" ? await emptySchema(options.baseUrl) : null;
  const replicaPorts = controlSchema
    ? await Promise.all(Array.from({ length: SPLIT_REPLICAS }, freePort))
    : [];
  let control: ServerProcess | null = null;
  const dataDirs: string[] = [];
  const replicas: ServerProcess[] = [];
  const workers: WorkerProcess[] = [];
  let disposed = false;
  const newDataDir = () => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-fault-"));
    dataDirs.push(dataDir);
    return dataDir;
  };
  const common = ["--database-url", schema.url, "--workers", "0", "--lease-ms", String(options.leaseMs)];
  return {
    databaseUrl: schema.url,
    replicas,
    workers,
    async startReplica(args = []) {
      if (!controlSchema) {
        const replica = await startServerProcess({
          dataDir: newDataDir(),
          apiKey: FAULT_API_KEY,
          // Replicas on one database share the master key, as an operator's do (else they refuse to start).
          env: { AWAKEN_WORKER_TOKEN: FAULT_WORKER_TOKEN, AWAKEN_MASTER_KEY: TEST_MASTER_KEY },
          args: [...common, ...args],
        });
        replicas.push(replica);
        return replica;
      }
      const port = replicaPorts[replicas.length];
      if (port === undefined)
        throw new Error(`a split fault cluster starts at most ${SPLIT_REPLICAS} replicas`);
      control ??= await startServerProcess({
        command: "control",
        dataDir: newDataDir(),
        apiKey: FAULT_API_KEY,
        env: { AWAKEN_CONTROL_TOKEN: CONTROL_TOKEN, AWAKEN_MASTER_KEY: TEST_MASTER_KEY },
        args: [
          "--database-url",
          controlSchema.url,
          "--coordinator-url",
          replicaPorts.map((p) => `http://127.0.0.1:${p}`).join(","),
        ],
      });
      const replica = await startServerProcess({
        command: "coordinator",
        dataDir: newDataDir(),
        apiKey: FAULT_API_KEY,
        env: { AWAKEN_WORKER_TOKEN: FAULT_WORKER_TOKEN, AWAKEN_CONTROL_TOKEN: CONTROL_TOKEN },
        args: [...common, "--port", String(port), "--control-url", control.url, ...args],
      });
      replicas.push(replica);
      return replica;
    },
    async startWorker(coordinatorUrl, env = {}, args = []) {
      // Tracked from its spawn, and stopped at once after dispose: a test that timed out goes on
      // running after its clean-up, and must not leave a worker behind.
      return startWorker(coordinatorUrl, FAULT_WORKER_TOKEN, env, args, undefined, undefined, (w) => {
        if (disposed) w.child.kill("SIGKILL");
        workers.push(w);
      });
    },
    async dispose() {
      disposed = true;
      const all = [...workers, ...replicas, ...(control ? [control] : [])];
      for (const p of all)
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await Promise.all(all.map((p) => p.exited));
      for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
      await schema.drop();
      await controlSchema?.drop();
    },
  };
}

/**
 * A fresh cluster for each test of the file that calls this at its top level, on the shared test
 * server (skipped, with the reason, only outside CI when no server is configured), disposed after
 * the test; the returned function gives the current one.
 */
export function useFaultCluster(options: { leaseMs: number }): () => FaultCluster {
  let cluster: FaultCluster | undefined;
  beforeEach(async (ctx) => {
    const reason = postgresUnavailable();
    if (reason) ctx.skip(reason);
    cluster = await startFaultCluster(options);
  });
  afterEach(async () => {
    await cluster?.dispose();
    cluster = undefined;
  });
  return () => {
    if (!cluster) throw new Error("no fault cluster: useFaultCluster's beforeEach has not run");
    return cluster;
  };
}

/** Resolves once `condition` holds, polling every `everyMs`; fails with `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  condition: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 15_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The worker's pino log lines (stderr, JSON) as objects; non-JSON lines are skipped. */
export function logLines(worker: WorkerProcess): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const line of worker.stderr().split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut mid-write: skip it
    }
  }
  return lines;
}
