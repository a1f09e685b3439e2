import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execLine, killLine, parseMessage, supervisorArgv } from "../../src/sandbox/supervisor.js";

/**
 * The real supervisor (supervisor.pl), run without bwrap: only in PID, mount and IPC namespaces of
 * its own (unshare, as a mapped root), because it kills every process it can see and empties /tmp
 * and /dev/shm after each command. The wrapper puts fresh tmpfs over both before perl starts and
 * gives up if it cannot; the commands' working directory is a scratch directory under /var/tmp.
 */
const NAMESPACES = ["--user", "--map-root-user", "--pid", "--fork", "--mount", "--ipc", "--mount-proc"];
const PRIVATE_TMP = 'set -e; mount -t tmpfs tmpfs /tmp; mount -t tmpfs tmpfs /dev/shm; exec "$@"';

interface Exit {
  op: "exit";
  code?: number | null;
  signal?: number | null;
  timedOut?: number;
  aborted?: number;
  truncated?: number;
  error?: string;
}

interface Outcome {
  stdout: string;
  stderr: string;
  exit: Exit;
  accepted: boolean;
  ms: number;
}

class Supervisor {
  readonly child: ChildProcessWithoutNullStreams;
  readonly ready: Promise<number>;
  private buffer = "";
  private readonly outcomes = new Map<
    number,
    { out: Buffer[]; err: Buffer[]; accepted: boolean; started: number; done: (o: Outcome) => void }
  >();
  private nextId = 1;
  private markReady!: (pid: number) => void;

  /** `cwd`: the directory it is started from (the test process's own by default). */
  constructor(workdir: string, cwd?: string) {
    const perl = supervisorArgv("/usr/bin/perl", process.arch, "");
    this.child = spawn("unshare", [...NAMESPACES, "--", "sh", "-c", PRIVATE_TMP, "sh", ...perl, workdir], {
      env: { PATH: "/usr/local/bin:/usr/bin:/bin", LANG: "C.UTF-8" },
      detached: true,
      ...(cwd === undefined ? {} : { cwd }),
    });
    this.ready = new Promise((resolve) => {
      this.markReady = resolve;
    });
    this.child.stdout.setEncoding("latin1");
    this.child.stdout.on("data", (chunk: string) => this.onData(chunk));
  }

  exec(argv: string[], options: { stdin?: string; timeoutMs?: number; maxOutputBytes?: number } = {}) {
    const id = this.nextId++;
    const done = new Promise<Outcome>((resolve) => {
      this.outcomes.set(id, { out: [], err: [], accepted: false, started: Date.now(), done: resolve });
    });
    this.child.stdin.write(
      execLine(id, {
        argv,
        ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
        timeoutMs: options.timeoutMs ?? 10_000,
        maxOutputBytes: options.maxOutputBytes ?? 1 << 20,
      }),
    );
    return { id, done };
  }

  bash(script: string, options: { stdin?: string; timeoutMs?: number; maxOutputBytes?: number } = {}) {
    return this.exec(["bash", "-c", script], options).done;
  }

  kill(id: number): void {
    this.child.stdin.write(killLine(id));
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    try {
      process.kill(-(this.child.pid ?? 0), "SIGKILL");
    } catch {
      // Gone already.
    }
    await exited;
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    for (let at = this.buffer.indexOf("\n"); at >= 0; at = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 1);
      const message = parseMessage(line);
      if (message === null) throw new Error(`not a protocol line: ${line}`);
      if (message.op === "ready") {
        this.markReady(message.pid);
        continue;
      }
      const outcome = this.outcomes.get(message.id);
      if (!outcome) continue;
      if (message.op === "accepted") outcome.accepted = true;
      else if (message.op === "data")
        (message.fd === 1 ? outcome.out : outcome.err).push(Buffer.from(message.hex, "hex"));
      else {
        this.outcomes.delete(message.id);
        outcome.done({
          stdout: Buffer.concat(outcome.out).toString("utf8"),
          stderr: Buffer.concat(outcome.err).toString("utf8"),
          exit: message as Exit,
          accepted: outcome.accepted,
          ms: Date.now() - outcome.started,
        });
      }
    }
  }
}

/** The pids in the supervisor's PID namespace but the listing shell's own (globbing forks nothing). */
const LIST_PIDS = 'for p in /proc/[0-9]*; do p="$(basename "$p")"; [ "$p" != $$ ] && echo "$p"; done; true';

describe("the supervisor program, run for real", () => {
  let workdir: string;
  let supervisor: Supervisor;

  beforeAll(async () => {
    workdir = await mkdtemp("/var/tmp/awaken-supervisor-");
    supervisor = new Supervisor(workdir);
    await supervisor.ready;
  });

  afterAll(async () => {
    await supervisor?.stop();
    if (workdir) await rm(workdir, { recursive: true, force: true });
  });

  it("says it is ready with its pid, then runs a command in the working directory with its stdin", async () => {
    expect(await supervisor.ready).toBe(1);
    const result = await supervisor.bash('pwd; cat; echo "to stderr" >&2', { stdin: "from stdin\n" });
    expect(result.accepted).toBe(true);
    expect(result.stdout).toBe(`${workdir}\nfrom stdin\n`);
    expect(result.stderr).toBe("to stderr\n");
    expect(result.exit).toMatchObject({ code: 0, signal: null, timedOut: 0, aborted: 0, truncated: 0 });
  });

  it("reports an exit code as code, and death by a signal as code null with the signal", async () => {
    expect((await supervisor.bash("exit 7")).exit).toMatchObject({ code: 7, signal: null });
    expect((await supervisor.bash("kill -TERM $$")).exit).toMatchObject({ code: null, signal: 15 });
    expect((await supervisor.bash("kill -KILL $$")).exit).toMatchObject({ code: null, signal: 9 });
  });

  it("answers an empty argv with an error and a missing program with exit code 1", async () => {
    expect((await supervisor.exec([]).done).exit).toEqual({
      op: "exit",
      id: expect.any(Number),
      error: "empty argv",
    });
    const missing = await supervisor.exec(["no-such-program-here"]).done;
    expect(missing.exit).toMatchObject({ code: 1, signal: null });
    expect(missing.stderr).toMatch(/execvp no-such-program-here/);
  });

  it("caps stdout and stderr together at maxOutputBytes and says it truncated them", async () => {
    const result = await supervisor.bash(
      "head -c 300000 /dev/zero | tr '\\0' o; head -c 300000 /dev/zero >&2",
      {
        maxOutputBytes: 1000,
      },
    );
    expect(result.stdout.length + result.stderr.length).toBe(1000);
    expect(result.stdout).toBe("o".repeat(1000));
    expect(result.exit).toMatchObject({ code: 0, truncated: 1 });
    const exact = await supervisor.bash("printf 12345", { maxOutputBytes: 5 });
    expect(exact.stdout).toBe("12345");
    expect(exact.exit).toMatchObject({ truncated: 0 });
  });

  it("kills a command past its timeout with its whole group, a child ignoring SIGTERM included", async () => {
    const result = await supervisor.bash("trap '' TERM; (trap '' TERM; sleep 30) & sleep 30", {
      timeoutMs: 300,
    });
    expect(result.exit).toMatchObject({ code: null, signal: 9, timedOut: 1, aborted: 0 });
    expect(result.ms).toBeLessThan(3_000);
    expect((await supervisor.bash(LIST_PIDS)).stdout).toBe("1\n");
  });

  it("leaves nothing a command started running: setsid, nohup and double-forked children die with it", async () => {
    const marker = join(workdir, "escaped");
    const result = await supervisor.bash(
      [
        `setsid sh -c 'trap "" TERM HUP; sleep 1; touch ${marker}' </dev/null >/dev/null 2>&1 &`,
        `nohup sh -c 'sleep 1; touch ${marker}' </dev/null >/dev/null 2>&1 &`,
        `(sh -c 'sleep 1; touch ${marker}' & ) </dev/null >/dev/null 2>&1`,
        "echo started",
      ].join("\n"),
    );
    expect(result.stdout).toBe("started\n");
    expect(result.exit).toMatchObject({ code: 0 });
    expect((await supervisor.bash(LIST_PIDS)).stdout).toBe("1\n");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(existsSync(marker)).toBe(false);
  });

  it("aborts the command a kill request names, and only that one", async () => {
    const running = supervisor.exec(["sleep", "30"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    supervisor.kill(running.id + 1000);
    supervisor.kill(running.id);
    const result = await running.done;
    expect(result.exit).toMatchObject({ code: null, signal: 9, aborted: 1, timedOut: 0 });
    expect(result.ms).toBeLessThan(3_000);
  });

  it("runs commands sent while one runs one after the other, each answered under its own id", async () => {
    const first = supervisor.exec(["bash", "-c", "sleep 0.3; echo first"]);
    const second = supervisor.exec(["bash", "-c", "echo second"]);
    const third = supervisor.exec(["bash", "-c", "exit 3"]);
    const [a, b, c] = await Promise.all([first.done, second.done, third.done]);
    expect([a.stdout, b.stdout, c.exit.code]).toEqual(["first\n", "second\n", 3]);
    // One at a time: the second could not start before the first was over.
    expect(b.ms).toBeGreaterThanOrEqual(300);
  });

  it("empties /tmp and /dev/shm after each command and keeps the working directory", async () => {
    await writeFile(join(workdir, "kept"), "kept\n");
    const wrote = await supervisor.bash(
      "echo x > /tmp/left; echo y > /dev/shm/left; echo z > mine; ls /tmp /dev/shm",
    );
    expect(wrote.stdout).toContain("left");
    const after = await supervisor.bash("ls -A /tmp /dev/shm; cat kept mine");
    expect(after.stdout).toBe("/dev/shm:\n\n/tmp:\nkept\nz\n");
    expect((await readdir(workdir)).sort()).toEqual(["kept", "mine"]);
  });

  it("empties /tmp even when it was started from a directory under /tmp, which its own tmpfs hides", async () => {
    const hidden = await mkdtemp("/tmp/awaken-supervisor-cwd-");
    const own = new Supervisor(workdir, hidden);
    try {
      await own.ready;
      await own.bash("echo x > /tmp/left; echo y > /dev/shm/left");
      const after = await own.bash("ls -A /tmp /dev/shm");
      expect(after.stdout).toBe("/dev/shm:\n\n/tmp:\n");
    } finally {
      await own.stop();
      await rm(hidden, { recursive: true, force: true });
    }
  });

  it("sweeps the running command and exits when its control input closes", async () => {
    const own = new Supervisor(workdir);
    await own.ready;
    const running = own.exec(["sleep", "30"]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = new Promise<number | null>((resolve) => own.child.once("exit", resolve));
    own.child.stdin.end();
    expect(await exited).toBe(0);
    void running;
    await own.stop();
  });
});
