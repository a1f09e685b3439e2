import { spawn } from "node:child_process";

/** Raw stderr kept while an installer runs: its tail is what gets scrubbed and cut for a client. */
const STDERR_WINDOW_CHARS = 16_000;

export interface InstallerRun {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Absent: the worker's own user. */
  user?: { uid: number; gid: number };
  timeoutMs: number;
}

export type InstallerOutcome = { ok: true } | { ok: false; why: string; stderr: string };

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/**
 * Runs one installer in its own process group (killed whole on timeout, and after it exits, so
 * nothing it started outlives it), stdin closed, stdout discarded, the tail of stderr kept.
 */
export function runInstaller(run: InstallerRun): Promise<InstallerOutcome> {
  return new Promise<InstallerOutcome>((resolve) => {
    let tail = "";
    const child = spawn(run.command, run.args, {
      env: run.env,
      cwd: run.cwd,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...(run.user ?? {}),
    });
    child.stdout?.on("data", () => {});
    child.stderr?.on("data", (chunk: Buffer) => {
      tail = (tail + chunk.toString("utf8")).slice(-STDERR_WINDOW_CHARS);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, run.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      resolve({ ok: false, why: `${run.command} could not be started: ${error.message}`, stderr: "" });
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      killGroup(child.pid);
      if (code === 0) return resolve({ ok: true });
      const why = timedOut
        ? `${run.command} did not finish within ${run.timeoutMs} ms`
        : `${run.command} exited with ${code ?? signal}`;
      resolve({ ok: false, why, stderr: tail });
    });
  });
}
