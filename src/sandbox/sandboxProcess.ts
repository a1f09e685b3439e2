import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import type { SandboxProcess } from "./ports.js";

const PIPE_GRACE_MS = 200;

/**
 * A long-lived process a tier started (a stdio MCP server): the leader of a process group of its
 * own, its stdin/stdout handed to the caller, the end of its stderr kept in memory only. `kill`
 * takes the group down (a tier may take the tree down its own way first: bwrap's init).
 */
export class LiveProcess implements SandboxProcess {
  readonly exited: Promise<number | null>;
  private tail = Buffer.alloc(0);
  private done = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly maxStderrBytes: number,
    private readonly killTree: (child: ChildProcess, exited: Promise<unknown>) => Promise<void>,
  ) {
    this.exited = new Promise((resolve) => {
      child.once("exit", (code) => {
        this.done = true;
        // Whatever it left in its group goes with it.
        killGroup(child);
        // What it wrote on stderr just before it went is usually still in the pipe; a grandchild
        // that escaped the group may hold the pipe open for ever, so wait only briefly.
        const stderr = child.stderr;
        if (!stderr || stderr.readableEnded) return resolve(code);
        const grace = setTimeout(() => resolve(code), PIPE_GRACE_MS);
        stderr.once("end", () => {
          clearTimeout(grace);
          resolve(code);
        });
      });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      const joined = Buffer.concat([this.tail, chunk]);
      this.tail = joined.subarray(Math.max(0, joined.length - this.maxStderrBytes));
    });
    // A peer gone mid-write is its exit's business, not an unhandled error.
    child.stdin?.on("error", () => {});
    child.stdout?.on("error", () => {});
  }

  /**
   * Spawns `command args` and resolves once it runs (and `started`, e.g. joining a cgroup, is
   * done); `preamble` is written on its stdin before anything else (the bwrap tier's variables).
   * Rejects if it could not be started.
   */
  static start(
    command: string,
    args: string[],
    options: Pick<SpawnOptions, "cwd" | "env" | "uid" | "gid" | "stdio">,
    how: {
      maxStderrBytes: number;
      signal: AbortSignal;
      preamble?: Buffer;
      started?: (child: ChildProcess) => Promise<void>;
      killTree?: (child: ChildProcess, exited: Promise<unknown>) => Promise<void>;
    },
  ): Promise<LiveProcess> {
    if (how.signal.aborted) return Promise.reject(how.signal.reason ?? new Error("aborted"));
    const child = spawn(command, args, {
      ...options,
      detached: true,
      stdio: options.stdio ?? ["pipe", "pipe", "pipe"],
    });
    const live = new LiveProcess(child, how.maxStderrBytes, how.killTree ?? (async () => {}));
    return new Promise<LiveProcess>((resolve, reject) => {
      child.once("error", (error) => {
        if (child.pid === undefined) reject(error);
      });
      child.once("spawn", () => {
        const onAbort = () => void live.kill();
        how.signal.addEventListener("abort", onAbort, { once: true });
        void live.exited.then(() => how.signal.removeEventListener("abort", onAbort));
        if (how.preamble && child.stdin) {
          const preamble = how.preamble;
          // The preamble may hold secrets: zeroed once the pipe has taken it.
          child.stdin.write(preamble, () => preamble.fill(0));
        }
        (how.started ? how.started(child) : Promise.resolve()).then(
          () => resolve(live),
          (error: unknown) => {
            void live.kill().then(() => reject(error));
          },
        );
      });
    });
  }

  get stdin() {
    if (!this.child.stdin) throw new Error("the process has no stdin pipe");
    return this.child.stdin;
  }

  get stdout() {
    if (!this.child.stdout) throw new Error("the process has no stdout pipe");
    return this.child.stdout;
  }

  stderrTail(): string {
    return this.tail.toString("utf8");
  }

  async kill(): Promise<void> {
    if (!this.done) {
      await this.killTree(this.child, this.exited);
      killGroup(this.child);
    }
    await this.exited;
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
