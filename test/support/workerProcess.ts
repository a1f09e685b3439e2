import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | string>;
}

/**
 * Spawns the built `awaken worker` with only the given environment (no inherited database URL),
 * so a test controls exactly what the worker can see.
 */
export function spawnWorker(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  /** What runs the worker command: the product's CLI, or a test entry running the same command. */
  command: string[] = [ENTRY, "worker"],
  /** Its working directory (where its default `.awaken/workspaces` lives); the test's own if absent. */
  cwd?: string,
): WorkerProcess {
  const child = spawn(process.execPath, [...command, ...args], {
    ...(cwd === undefined ? {} : { cwd }),
    env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    err += chunk;
  });
  const exited = new Promise<number | string>((resolve) => {
    child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Resolves once the worker printed that it is running (it has reached the coordinator). */
export async function startWorker(
  url: string,
  token: string,
  env: NodeJS.ProcessEnv = {},
  args: string[] = [],
  command?: string[],
  cwd?: string,
  /** Told of the child as soon as it exists, so a caller can clean it up even if the test ends first. */
  onSpawn?: (worker: WorkerProcess) => void,
) {
  const worker = spawnWorker(
    ["--coordinator-url", url, "--model-retry-base-ms", "10", ...args],
    { AWAKEN_WORKER_TOKEN: token, ...env },
    command,
    cwd,
  );
  onSpawn?.(worker);
  const deadline = Date.now() + 15_000;
  while (!/is running/.test(worker.stdout())) {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null || Date.now() > deadline) {
      const state = worker.child.exitCode ?? worker.child.signalCode ?? "none: still running";
      // A worker that never came up is nobody's to stop later: stop it here.
      worker.child.kill("SIGKILL");
      throw new Error(`worker did not start (exit ${state}):\n${worker.stdout()}\n${worker.stderr()}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return worker;
}
