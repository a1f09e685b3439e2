import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import type { ExecRequest, ExecResult } from "./ports.js";

const PIPE_GRACE_MS = 200;

/**
 * Runs one command as the leader of a new process group and collects its output, the one way every
 * tier starts a process. Past the timeout, or when the caller aborts, the whole group is killed: a
 * command's children (a backgrounded `sleep`, a daemonized grandchild) must not outlive it.
 *
 * Completion is the leader's `exit`, not the pipes' `close`: a grandchild that escaped the group
 * (setsid) may hold the pipes open forever.
 */
export function execInProcessGroup(
  command: string,
  args: string[],
  request: Pick<ExecRequest, "stdin" | "timeoutMs" | "maxOutputBytes" | "signal">,
  options: Pick<SpawnOptions, "cwd" | "env" | "uid" | "gid" | "stdio">,
  /** Called once spawned (bwrap's launcher joins its cgroup); if it rejects, the exec does too. */
  started?: (child: ChildProcess) => Promise<void>,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    if (request.signal.aborted) {
      reject(request.signal.reason ?? new Error("aborted"));
      return;
    }
    const child = spawn(command, args, {
      ...options,
      detached: true,
      stdio: options.stdio ?? ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let captured = 0;
    let truncated = false;
    let timedOut = false;
    const capture = (sink: Buffer[]) => (chunk: Buffer) => {
      const room = request.maxOutputBytes - captured;
      if (room <= 0) {
        truncated = true;
        return;
      }
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (kept.length < chunk.length) truncated = true;
      sink.push(kept);
      captured += kept.length;
    };
    child.stdout?.on("data", capture(out));
    child.stderr?.on("data", capture(err));
    let startError: unknown = null;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, request.timeoutMs);
    const onAbort = () => killGroup();
    request.signal.addEventListener("abort", onAbort, { once: true });
    if (started && child.pid !== undefined) {
      started(child).catch((error: unknown) => {
        startError = error;
        killGroup();
      });
    }

    child.on("error", (error) => {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", onAbort);
      reject(error);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      request.signal.removeEventListener("abort", onAbort);
      // Whatever the leader left behind in its group goes with it.
      killGroup();
      // Output still in the pipes usually ends right after `exit`; an escaped grandchild may keep
      // them open for ever, so wait for their end only briefly, then stop listening.
      const settle = () => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        if (request.signal.aborted) {
          reject(request.signal.reason ?? new Error("aborted"));
          return;
        }
        if (startError !== null) {
          reject(startError);
          return;
        }
        resolve({
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
          exitCode: code,
          timedOut,
          truncated,
        });
      };
      const streams = [child.stdout, child.stderr].filter((s) => s !== null && !s.readableEnded);
      if (streams.length === 0) return settle();
      let open = streams.length;
      const grace = setTimeout(settle, PIPE_GRACE_MS);
      for (const stream of streams) {
        stream?.once("end", () => {
          open -= 1;
          if (open === 0) {
            clearTimeout(grace);
            settle();
          }
        });
      }
    });
    if (child.stdin) {
      child.stdin.on("error", () => {
        // The command may exit without reading its input (EPIPE): not an error of ours.
      });
      child.stdin.end(request.stdin ?? "");
    }
  });
}
