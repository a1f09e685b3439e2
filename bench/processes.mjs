// Starts `awaken` commands as their own processes, as an operator runs them, so the server's CPU
// is not mixed with the client's and the remote-worker topology really crosses process boundaries.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * Spawns `node dist/cli/main.js ...args` and resolves once stdout matches `ready` (the banner).
 * The child is registered on `scope`, so it is stopped however the bench ends. The environment is
 * built from scratch: no provider key leaks in (the offline model must answer) and no
 * DATABASE_URL reaches a remote worker (which refuses to start with one).
 */
export async function startAwaken(scope, { label, args, env, ready }) {
  const child = spawn(process.execPath, [...nodeOptions(), CLI, ...args], {
    env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  scope.defer(() => stopProcess(child));
  let out = "";
  const match = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label} printed no banner within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    // Keep reading stdout after the banner too: a full pipe would block the child.
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const found = ready.exec(out);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${signal ?? code}) before it was ready`));
    });
  });
  return { child, match };
}

/** Extra Node options for the children (AWAKEN_BENCH_NODE_ARGS, space-separated), e.g. a profiler's. */
function nodeOptions() {
  return (process.env.AWAKEN_BENCH_NODE_ARGS ?? "").split(" ").filter((option) => option !== "");
}

/** SIGTERM (graceful: in-flight runs are handed back), then SIGKILL if it does not exit in time. */
export async function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  let timer;
  const timedOut = new Promise((resolve) => {
    timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
  });
  if (await Promise.race([exited.then(() => false), timedOut])) {
    child.kill("SIGKILL");
    await exited;
  }
  clearTimeout(timer);
}
