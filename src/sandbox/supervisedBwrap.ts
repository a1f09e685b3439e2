import { type ChildProcess, spawn } from "node:child_process";
import { killBwrap } from "./bwrapKill.js";
import { type BwrapLaunch, type PreparedSpawn, prepareSpawn } from "./bwrapLaunch.js";
import { EGRESS_SANDBOX_DIR, EGRESS_SOCKET_NAME } from "./egressProxy.js";
import { type ExecRequest, type ExecResult, type SandboxTier, SandboxUnavailableError } from "./ports.js";
import { execLine, killLine, parseMessage, type SupervisorMessage, supervisorArgv } from "./supervisor.js";

/** How long bwrap and the supervisor may take to come up. */
const START_TIMEOUT_MS = 10_000;
/**
 * Past a command's own timeout (or an abort) the supervisor has this long to report; then the
 * host kills the whole sandbox (a supervisor a command stopped or starved must not hold it up).
 */
const BACKSTOP_MS = 3_000;
/** A line longer than this is no message of the supervisor's: the sandbox is killed. */
const MAX_LINE_CHARS = 1 << 22;
const STDERR_TAIL_CHARS = 4_096;
/** After bwrap exits, how long its stdout may take to deliver what is left in it. */
const PIPE_GRACE_MS = 200;

/** The command was never handed to a process: running it on a fresh sandbox is safe. */
export class NotAcceptedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NotAcceptedError";
  }
}

interface Pending {
  id: number;
  request: ExecRequest;
  accepted: boolean;
  out: Buffer[];
  err: Buffer[];
  captured: number;
  truncated: boolean;
  /** The host gave up waiting past the timeout and killed the sandbox. */
  backstopTimedOut: boolean;
  timer: NodeJS.Timeout;
  abortTimer: NodeJS.Timeout | null;
  onAbort: () => void;
  resolve: (result: ExecResult) => void;
  reject: (error: unknown) => void;
}

/**
 * How a supervised sandbox other than bwrap's is started and taken down (the container tier):
 * its tier (named in errors) and how its whole tree is killed, given the launcher's host pid.
 */
export interface SupervisedTree {
  tier: SandboxTier;
  killTree(pid: number, exited: Promise<unknown>): Promise<void>;
}

const BWRAP_TREE: SupervisedTree = { tier: "bwrap", killTree: killBwrap };

/**
 * One long-lived bwrap sandbox running the supervisor (supervisor.ts), and the one command it runs
 * at a time. The sandbox dies with the worker (bwrap's --die-with-parent); `kill` takes it down at
 * once (the namespace's init dies with bwrap, and every process of the PID namespace with it).
 * The container tier runs the same supervisor as a podman container's command (`startPrepared`).
 */
export class SupervisedBwrap {
  /** Settles when the supervisor is listening, or the start failed. */
  readonly ready: Promise<void>;
  /** Resolves once the bwrap process has exited. */
  readonly exited: Promise<void>;
  /** The supervisor's pid inside the sandbox, once ready. */
  supervisorPid: number | null = null;
  private readonly child: ChildProcess;
  private running = true;
  private current: Pending | null = null;
  private nextId = 1;
  private lineBuffer = "";
  private stderrTail = "";
  private markReady!: () => void;
  private failStart!: (error: unknown) => void;
  /** Settles once the launcher is in the sandbox's cgroup and let go (PreparedSpawn.started). */
  private readonly launched: Promise<void>;

  private constructor(
    command: string,
    args: string[],
    options: Parameters<typeof spawn>[2],
    started: (child: ChildProcess) => Promise<void>,
    private readonly tree: SupervisedTree,
  ) {
    this.ready = new Promise((resolve, reject) => {
      this.markReady = resolve;
      this.failStart = reject;
    });
    this.ready.catch(() => {});
    // Its own process group, so `kill` reaches bash, prlimit and bwrap alike.
    this.child = spawn(command, args, { ...options, detached: true });
    this.launched = this.child.pid === undefined ? Promise.resolve() : started(this.child);
    this.launched.catch(() => {});
    this.exited = new Promise((resolve) => {
      this.child.once("exit", () => {
        this.running = false;
        // What the supervisor wrote before it went (a command's report) may still be in the pipe.
        const stdout = this.child.stdout;
        let finished = false;
        const done = () => {
          if (finished) return;
          finished = true;
          clearTimeout(grace);
          this.onExit();
          resolve();
        };
        const grace = setTimeout(done, PIPE_GRACE_MS);
        if (!stdout || stdout.readableEnded) done();
        else stdout.once("end", done);
      });
      this.child.once("error", (error) => {
        if (this.child.pid !== undefined) return; // Spawned: its exit follows.
        this.running = false;
        this.failStart(
          new SandboxUnavailableError(
            this.tree.tier,
            `the ${this.tree.tier} sandbox could not be started: ${error.message}`,
          ),
        );
        this.settleOnDeath();
        resolve();
      });
    });
    this.child.stdin?.on("error", () => {
      // The supervisor is gone; its exit is handled there.
    });
    this.child.stdout?.setEncoding("latin1");
    this.child.stdout?.on("data", (chunk: string) => this.onStdout(chunk));
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
  }

  /** Starts bwrap with the supervisor over `launch.workspaceHostPath` and waits until it listens. */
  static async start(launch: BwrapLaunch): Promise<SupervisedBwrap> {
    const proxySocket =
      launch.egressDir === undefined ? undefined : `${EGRESS_SANDBOX_DIR}/${EGRESS_SOCKET_NAME}`;
    const prepared = await prepareSpawn(
      launch,
      supervisorArgv(launch.prerequisites.host.perlPath, process.arch, proxySocket),
    );
    return SupervisedBwrap.startPrepared(prepared, BWRAP_TREE);
  }

  /** Starts a prepared launcher whose command is the supervisor, and waits until it listens. */
  static async startPrepared(prepared: PreparedSpawn, tree: SupervisedTree): Promise<SupervisedBwrap> {
    let sandbox: SupervisedBwrap;
    try {
      sandbox = new SupervisedBwrap(
        prepared.command,
        prepared.args,
        prepared.options,
        prepared.started,
        tree,
      );
    } finally {
      // The child holds its own copies from here on.
      await prepared.close();
    }
    const timer = setTimeout(() => {
      sandbox.failStart(
        new SandboxUnavailableError(tree.tier, `the sandbox did not start within ${START_TIMEOUT_MS} ms`),
      );
      void sandbox.kill();
    }, START_TIMEOUT_MS);
    try {
      await sandbox.launched;
      await sandbox.ready;
    } catch (error) {
      await sandbox.kill();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    return sandbox;
  }

  get alive(): boolean {
    return this.running;
  }

  get busy(): boolean {
    return this.current !== null;
  }

  /** Host pid of bwrap (its process group). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Runs one command (one at a time). Rejects with `NotAcceptedError` when the sandbox died before
   * the supervisor took the command: it never ran.
   */
  exec(request: ExecRequest): Promise<ExecResult> {
    if (this.current) return Promise.reject(new Error("the sandbox is running another command"));
    if (!this.running) return Promise.reject(new NotAcceptedError("the sandbox is not running"));
    if (request.signal.aborted) return Promise.reject(request.signal.reason ?? new Error("aborted"));
    let line: string;
    try {
      line = execLine(this.nextId, request);
    } catch (error) {
      return Promise.reject(error);
    }
    const id = this.nextId++;
    return new Promise<ExecResult>((resolve, reject) => {
      const pending: Pending = {
        id,
        request,
        accepted: false,
        out: [],
        err: [],
        captured: 0,
        truncated: false,
        backstopTimedOut: false,
        timer: setTimeout(() => {
          pending.backstopTimedOut = true;
          void this.kill();
        }, request.timeoutMs + BACKSTOP_MS),
        abortTimer: null,
        onAbort: () => {
          this.child.stdin?.write(killLine(id));
          pending.abortTimer ??= setTimeout(() => void this.kill(), BACKSTOP_MS);
        },
        resolve,
        reject,
      };
      this.current = pending;
      request.signal.addEventListener("abort", pending.onAbort, { once: true });
      this.child.stdin?.write(line);
    });
  }

  /** Kills the sandbox and everything in it (bwrapKill.ts); resolves once bwrap has exited. */
  async kill(): Promise<void> {
    const pid = this.child.pid;
    if (this.running && pid !== undefined) await this.tree.killTree(pid, this.exited);
    await this.exited;
  }

  private onStdout(chunk: string): void {
    this.lineBuffer += chunk;
    for (;;) {
      const at = this.lineBuffer.indexOf("\n");
      if (at < 0) break;
      const line = this.lineBuffer.slice(0, at);
      this.lineBuffer = this.lineBuffer.slice(at + 1);
      const message = parseMessage(line);
      if (message === null) {
        this.protocolError();
        return;
      }
      this.onMessage(message);
    }
    if (this.lineBuffer.length > MAX_LINE_CHARS) this.protocolError();
  }

  /** Anything but the protocol on the supervisor's stdout: trust nothing more from it. */
  private protocolError(): void {
    this.lineBuffer = "";
    this.stderrTail += "\nthe supervisor broke its protocol";
    void this.kill();
  }

  private onMessage(message: SupervisorMessage): void {
    if (message.op === "ready") {
      this.supervisorPid = message.pid;
      this.markReady();
      return;
    }
    const pending = this.current;
    if (!pending || message.id !== pending.id) return;
    if (message.op === "accepted") {
      pending.accepted = true;
    } else if (message.op === "data") {
      const data = Buffer.from(message.hex, "hex");
      const room = pending.request.maxOutputBytes - pending.captured;
      const kept = data.length > room ? data.subarray(0, Math.max(0, room)) : data;
      if (kept.length < data.length) pending.truncated = true;
      if (kept.length > 0) {
        (message.fd === 1 ? pending.out : pending.err).push(kept);
        pending.captured += kept.length;
      }
    } else {
      this.finish(pending);
      if (message.error !== undefined) {
        pending.reject(new Error(`the command could not be started in the sandbox: ${message.error}`));
      } else if (pending.request.signal.aborted) {
        pending.reject(pending.request.signal.reason ?? new Error("aborted"));
      } else {
        pending.resolve({
          ...this.output(pending),
          exitCode: typeof message.code === "number" ? message.code : null,
          timedOut: message.timedOut === 1,
          truncated: pending.truncated || message.truncated === 1,
        });
      }
    }
  }

  private output(pending: Pending): { stdout: string; stderr: string } {
    return {
      stdout: Buffer.concat(pending.out).toString("utf8"),
      stderr: Buffer.concat(pending.err).toString("utf8"),
    };
  }

  private finish(pending: Pending): void {
    clearTimeout(pending.timer);
    if (pending.abortTimer) clearTimeout(pending.abortTimer);
    pending.request.signal.removeEventListener("abort", pending.onAbort);
    if (this.current === pending) this.current = null;
  }

  private onExit(): void {
    const detail = this.stderrTail.trim();
    this.failStart(
      new SandboxUnavailableError(
        this.tree.tier,
        `the sandbox stopped before its supervisor was ready${detail ? `: ${detail}` : ""}`,
      ),
    );
    this.settleOnDeath();
  }

  /** The sandbox is gone: the command it was running ends with it. */
  private settleOnDeath(): void {
    const pending = this.current;
    if (!pending) return;
    this.finish(pending);
    if (pending.request.signal.aborted) {
      pending.reject(pending.request.signal.reason ?? new Error("aborted"));
    } else if (pending.backstopTimedOut) {
      pending.resolve({
        ...this.output(pending),
        exitCode: null,
        timedOut: true,
        truncated: pending.truncated,
      });
    } else if (!pending.accepted) {
      pending.reject(new NotAcceptedError("the sandbox stopped before it took the command"));
    } else {
      pending.reject(
        new Error(
          "the sandbox stopped while the command ran (its supervisor died); the next command restarts it",
        ),
      );
    }
  }
}
