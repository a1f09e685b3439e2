/**
 * ACP's `terminal/*`: commands a harness runs in the session's sandbox, each a long-lived sandbox
 * process (`Sandbox.spawn`, so `kill` takes its whole tree down), its stdout and stderr kept
 * together, up to a byte limit whose tail is what stays.
 */
import { randomUUID } from "node:crypto";
import {
  type CreateTerminalRequest,
  type CreateTerminalResponse,
  RequestError,
  type TerminalExitStatus,
  type TerminalOutputResponse,
} from "@agentclientprotocol/sdk";
import { NO_STARTUP_FILES, type Sandbox, type SandboxProcess } from "../../sandbox/ports.js";
import { confinedDirectory, invalid, quoted, workspacePathParam } from "./harnessPaths.js";
import { OutputTail } from "./outputTail.js";

export const MAX_ARGS = 1024;
export const MAX_ARGV_BYTES = 256 * 1024;
export const MAX_ENV_ENTRIES = 256;
export const MAX_ENV_BYTES = 256 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;
/** Waited for after the process is gone, for output still in the pipe (a grandchild may hold it). */
const DRAIN_GRACE_MS = 200;

/**
 * The terminal's launcher, run by a bash that reads no startup file. The harness's variables come
 * on stdin (a count, then `NAME=value` fields, each NUL-terminated; bash reads a pipe one byte at
 * a time), never on a command line and never in the launcher's own environment, so a `PATH` of
 * theirs cannot change which bash runs this. Then: stdin closed, the checked directory (`$1`),
 * and the harness's argv exec'd in a subshell (`exec --`: a program, never a builtin or function)
 * with stderr joined to stdout. A command killed by a signal ends with 128 + its number, as in a
 * shell, on every tier.
 */
const LAUNCHER = `
IFS= read -r -d "" n && [[ $n =~ ^[0-9]{1,3}$ ]] || exit 125
for ((i = 0; i < n; i++)); do IFS= read -r -d "" kv || exit 125; export -- "$kv" 2>/dev/null; done
exec </dev/null 2>&1
cd -- "$1" || exit 126
shift
( exec -- "$@" )
`;

interface Terminal {
  process: SandboxProcess;
  output: OutputTail;
  /** Settles once it has exited and its output has been read. */
  done: Promise<TerminalExitStatus>;
  status?: TerminalExitStatus;
  killedByUs: boolean;
}

function stringList(value: unknown, what: string, maxCount: number): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > maxCount)
    throw invalid(`${what} must be a list of at most ${maxCount}`);
  return value.map((item) => {
    if (typeof item !== "string") throw invalid(`every entry of ${what} must be a string`);
    if (item.includes("\0")) throw invalid(`an entry of ${what} contains a NUL byte`);
    return item;
  });
}

function envParam(value: unknown): Array<[string, string]> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_ENV_ENTRIES) {
    throw invalid(`env must be a list of at most ${MAX_ENV_ENTRIES} variables`);
  }
  let bytes = 0;
  return value.map((entry: unknown) => {
    const { name, value: text } = (entry ?? {}) as { name?: unknown; value?: unknown };
    if (typeof name !== "string" || !ENV_NAME.test(name)) {
      throw invalid(`env: ${typeof name === "string" ? quoted(name) : "an entry"} is not a variable name`);
    }
    if (typeof text !== "string") throw invalid(`env: the value of ${name} must be a string`);
    if (text.includes("\0")) throw invalid(`env: the value of ${name} contains a NUL byte`);
    bytes += Buffer.byteLength(name) + Buffer.byteLength(text) + 2;
    if (bytes > MAX_ENV_BYTES) throw invalid(`env is larger than ${MAX_ENV_BYTES} bytes`);
    return [name, text];
  });
}

function envRecords(env: Array<[string, string]>): Buffer {
  return Buffer.concat([
    Buffer.from(`${env.length}\0`),
    ...env.map(([name, text]) => Buffer.from(`${name}=${text}\0`, "utf8")),
  ]);
}

export class HarnessTerminals {
  private readonly terminals = new Map<string, Terminal>();
  private starting = 0;
  private closed = false;

  constructor(
    private readonly sandbox: Sandbox,
    private readonly options: { signal: AbortSignal; maxOutputBytes: number; maxTerminals: number },
  ) {}

  async create(params: CreateTerminalRequest): Promise<CreateTerminalResponse> {
    const command: unknown = params.command;
    if (typeof command !== "string" || command === "") throw invalid("command must be a non-empty string");
    if (command.includes("\0")) throw invalid("command contains a NUL byte");
    const args = stringList(params.args, "args", MAX_ARGS);
    const argvBytes = [command, ...args].reduce((sum, arg) => sum + Buffer.byteLength(arg) + 1, 0);
    if (argvBytes > MAX_ARGV_BYTES) throw invalid(`command and args are larger than ${MAX_ARGV_BYTES} bytes`);
    const env = envParam(params.env);
    const limit = this.outputLimit(params.outputByteLimit);
    const workspace = this.sandbox.workspacePath;
    const requestedCwd =
      params.cwd === undefined || params.cwd === null
        ? workspace
        : workspacePathParam(params.cwd, workspace, "cwd");
    this.checkRoom();
    // Held while the directory is checked and the process starts, so concurrent creates count too.
    this.starting += 1;
    let child: SandboxProcess;
    try {
      const cwd = await confinedDirectory(this.sandbox, requestedCwd, "cwd", this.options.signal);
      child = await this.sandbox.spawn({
        argv: ["bash", ...NO_STARTUP_FILES, "-c", LAUNCHER, "awaken-terminal", cwd, command, ...args],
        env: {},
        maxStderrBytes: 4096,
        signal: this.options.signal,
      });
    } finally {
      this.starting -= 1;
    }
    if (this.closed) {
      await child.kill();
      throw invalid("the session's terminals are closed");
    }
    child.stdin.on("error", () => {});
    // The values may be secrets of the harness's: zeroed once the pipe has taken them.
    const records = envRecords(env);
    child.stdin.end(records, () => records.fill(0));
    const id = `term_${randomUUID()}`;
    const output = new OutputTail(limit);
    const drained = new Promise<void>((resolve) => {
      child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
      child.stdout.once("end", resolve);
      child.stdout.once("close", resolve);
    });
    const terminal: Terminal = {
      process: child,
      output,
      killedByUs: false,
      done: child.exited.then(async (code) => {
        await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, DRAIN_GRACE_MS))]);
        // The launcher outlives the command (a signal the command died of is its 128 + n): it dies
        // of a signal itself only when its group is killed, by us or by the memory limit.
        const status: TerminalExitStatus =
          terminal.killedByUs || code === null
            ? { exitCode: null, signal: "SIGKILL" }
            : { exitCode: code, signal: null };
        terminal.status = status;
        return status;
      }),
    };
    this.terminals.set(id, terminal);
    return { terminalId: id };
  }

  output(terminalId: unknown): TerminalOutputResponse {
    const terminal = this.get(terminalId);
    const { text, truncated } = terminal.output.read();
    return { output: text, truncated, exitStatus: terminal.status ?? null };
  }

  /** Resolves once the command has exited, or rejects when `signal` (the request's) aborts first. */
  async waitForExit(terminalId: unknown, signal?: AbortSignal): Promise<TerminalExitStatus> {
    const terminal = this.get(terminalId);
    if (!signal) return terminal.done;
    if (signal.aborted) throw RequestError.requestCancelled();
    return new Promise<TerminalExitStatus>((resolve, reject) => {
      const onAbort = () => reject(RequestError.requestCancelled());
      signal.addEventListener("abort", onAbort, { once: true });
      terminal.done.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  async kill(terminalId: unknown): Promise<void> {
    await this.stop(this.get(terminalId));
  }

  async release(terminalId: unknown): Promise<void> {
    const terminal = this.get(terminalId);
    this.terminals.delete(terminalId as string);
    await this.stop(terminal);
  }

  /** Kills every terminal and refuses new ones. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.terminals.values()];
    this.terminals.clear();
    await Promise.all(all.map((terminal) => this.stop(terminal)));
  }

  private async stop(terminal: Terminal): Promise<void> {
    if (terminal.status === undefined) terminal.killedByUs = true;
    await terminal.process.kill();
    await terminal.done;
  }

  private get(terminalId: unknown): Terminal {
    if (typeof terminalId !== "string" || terminalId === "")
      throw invalid("terminalId must be a non-empty string");
    const terminal = this.terminals.get(terminalId);
    if (!terminal) {
      throw new RequestError(
        -32002,
        `Resource not found: terminal ${quoted(terminalId)} (released, or never created)`,
      );
    }
    return terminal;
  }

  private outputLimit(value: unknown): number {
    if (value === undefined || value === null) return this.options.maxOutputBytes;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
      throw invalid("outputByteLimit must be a non-negative integer");
    }
    return Math.min(value, this.options.maxOutputBytes);
  }

  private checkRoom(): void {
    if (this.closed || this.options.signal.aborted) throw invalid("the session's terminals are closed");
    if (this.terminals.size + this.starting >= this.options.maxTerminals) {
      throw invalid(`at most ${this.options.maxTerminals} terminals at once: release one first`);
    }
  }
}
