import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { emptySchema } from "./postgresFixtures.js";
import { type ServerProcess, startServerProcess } from "./serverProcess.js";

export const CONTROL_TOKEN = "control-token-split-tests-0123456789abcdef";

export interface SplitCluster {
  control: ServerProcess;
  /** Null while it is down (`startCoordinator` brings it up). */
  coordinator: ServerProcess | null;
  /** The coordinator's URL, fixed before it first starts (Control registers with it). */
  coordinatorUrl: string;
  controlSchema: { schema: string; url: string };
  coordinatorSchema: { schema: string; url: string };
  startCoordinator(): Promise<ServerProcess>;
  /** Stops Control (SIGTERM) and starts it again on the same port, data dir and schema. */
  restartControl(extraArgs?: string[]): Promise<ServerProcess>;
  /** Stops Control (SIGTERM); `restartControl` brings it back. */
  stopControl(): Promise<void>;
  /** SIGKILLs every process and drops both schemas. */
  dispose(): Promise<void>;
}

/** A port nothing listens on now (the coordinator takes it when it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

/**
 * `awaken control` and `awaken coordinator` as separate real processes on PostgreSQL, each in a
 * schema of its own (as the split's database roles would have it). Control starts first, with the
 * coordinator's address; the coordinator starts now, or later (`coordinatorDown`).
 */
export async function startSplitCluster(options: {
  dataDir: string;
  apiKey: string;
  workerToken?: string;
  coordinatorDown?: boolean;
  env?: NodeJS.ProcessEnv;
  coordinatorArgs?: string[];
}): Promise<SplitCluster> {
  const controlSchema = await emptySchema();
  const coordinatorSchema = await emptySchema();
  const port = await freePort();
  const controlPort = await freePort();
  const coordinatorUrl = `http://127.0.0.1:${port}`;
  const processes: ServerProcess[] = [];
  const controlDir = join(options.dataDir, "control");
  const coordinatorDir = join(options.dataDir, "coordinator");
  mkdirSync(controlDir, { recursive: true, mode: 0o700 });
  mkdirSync(coordinatorDir, { recursive: true, mode: 0o700 });
  const startControl = async (extraArgs: string[] = []) => {
    const started = await startServerProcess({
      command: "control",
      dataDir: controlDir,
      apiKey: options.apiKey,
      env: { AWAKEN_CONTROL_TOKEN: CONTROL_TOKEN, ...options.env },
      args: [
        "--port",
        String(controlPort),
        "--database-url",
        controlSchema.url,
        "--coordinator-url",
        coordinatorUrl,
        ...extraArgs,
      ],
    });
    processes.push(started);
    return started;
  };
  const control = await startControl();
  const cluster: SplitCluster = {
    control,
    coordinator: null,
    coordinatorUrl,
    controlSchema,
    coordinatorSchema,
    startCoordinator: async () => {
      const coordinator = await startServerProcess({
        command: "coordinator",
        dataDir: coordinatorDir,
        apiKey: options.apiKey,
        env: {
          AWAKEN_CONTROL_TOKEN: CONTROL_TOKEN,
          ...(options.workerToken ? { AWAKEN_WORKER_TOKEN: options.workerToken } : {}),
          ...options.env,
        },
        args: [
          "--port",
          String(port),
          "--database-url",
          coordinatorSchema.url,
          "--control-url",
          control.url,
          ...(options.coordinatorArgs ?? []),
        ],
      });
      processes.push(coordinator);
      cluster.coordinator = coordinator;
      return coordinator;
    },
    restartControl: async (extraArgs) => {
      await cluster.stopControl();
      cluster.control = await startControl(extraArgs);
      return cluster.control;
    },
    stopControl: async () => {
      const { child, exited } = cluster.control;
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
    dispose: async () => {
      for (const p of processes)
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await Promise.all(processes.map((p) => p.exited));
      await controlSchema.drop();
      await coordinatorSchema.drop();
    },
  };
  try {
    if (!options.coordinatorDown) await cluster.startCoordinator();
  } catch (error) {
    await cluster.dispose();
    throw error;
  }
  return cluster;
}
