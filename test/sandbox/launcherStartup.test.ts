import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bwrapCommand, DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { BwrapTierProvider } from "../../src/sandbox/bwrapTier.js";
import type { Sandbox, SandboxProvider } from "../../src/sandbox/ports.js";
import { privateMountsArgv } from "../../src/sandbox/sandboxMounts.js";

/**
 * The launchers every bwrap sandbox starts through (bash closing descriptors, and for a root
 * worker bash binding the workspace in a private mount namespace) run as the worker's user, root
 * included: they must read no startup file (root's ~/.bashrc, a BASH_ENV, a function exported in
 * the environment), and hand bwrap, whose init is the sandbox's PID 1 with /proc/1/environ readable
 * by every command, an empty environment rather than the worker's or what an rc file exported.
 */

let dir: string;
/** Touched by every startup file and hook planted below; must never appear. */
let marker: string;

beforeAll(() => {
  // Also the worker's HOME below: its rc files, not the machine's /root/.bashrc, are the planted ones.
  dir = mkdtempSync(join(tmpdir(), "launcher-startup-"));
  marker = join(dir, "sourced");
  const plant = `echo "$0 read a startup file" >&2; touch ${marker}; export AWAKEN_RC_MARKER=rc\n`;
  for (const file of [".bashrc", ".profile", ".bash_profile", "bash_env"]) {
    writeFileSync(join(dir, file), plant);
  }
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A stand-in for a tool that takes options up to `--` and then execs the rest. Perl, as a shell
 * would add variables (PWD) of its own.
 */
function passThrough(name: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    "#!/usr/bin/perl\nshift while @ARGV && $ARGV[0] ne '--'; shift; exec { $ARGV[0] } @ARGV;\n",
  );
  chmodSync(path, 0o755);
  return path;
}

/** A stand-in for bwrap that writes the environment it was started with. */
function envRecorder(out: string): string {
  const path = join(dir, "bwrap");
  writeFileSync(
    path,
    `#!/usr/bin/perl\nopen(my $out, '>', '${out}') or die;\nprint $out map { "$_=$ENV{$_}\\n" } sort keys %ENV;\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

/** The worker's environment, hostile: a HOME with rc files, BASH_ENV, ENV, an exported function. */
function workerEnvironment(): NodeJS.ProcessEnv {
  return {
    HOME: dir,
    BASH_ENV: join(dir, "bash_env"),
    ENV: join(dir, "bash_env"),
    "BASH_FUNC_exec%%": `() { touch ${marker}; builtin exec "$@"; }`,
    AWAKEN_WORKER_MARKER: "worker",
  };
}

/** Runs `command args` with socketpair stdio (as the worker does) in the hostile environment. */
function run(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: workerEnvironment(), stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
    child.stdin.end();
  });
}

describe("a bwrap sandbox's launcher", () => {
  const launch = (launcher?: string[]) =>
    bwrapCommand({
      bashPath: "/bin/bash",
      prlimitPath: passThrough("prlimit"),
      bwrapPath: envRecorder(join(dir, "bwrap-env")),
      limits: DEFAULT_LIMITS,
      systemEntries: [],
      workspaceHostPath: "/nonexistent",
      argv: ["true"],
      ...(launcher === undefined ? {} : { launcher }),
    });

  it("reads no startup file and hands bwrap an empty environment (a worker that is not root)", async () => {
    const out = join(dir, "bwrap-env");
    rmSync(out, { force: true });
    const { command, args } = launch();
    const result = await run(command, args);
    expect(result).toEqual({ code: 0, stderr: "" });
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(out, "utf8")).toBe("");
  });

  it("reads no startup file and hands bwrap an empty environment (a root worker's private mounts)", async () => {
    const out = join(dir, "bwrap-env");
    rmSync(out, { force: true });
    const launcher = privateMountsArgv(
      {
        unsharePath: passThrough("unshare"),
        mountPath: "/bin/true",
        setprivPath: passThrough("setpriv"),
        bashPath: "/bin/bash",
      },
      { uid: 4242, gid: 4242 },
      [{ source: dir, point: "workspace" }],
    );
    const { command, args } = launch(launcher);
    const result = await run(command, args);
    expect(result).toEqual({ code: 0, stderr: "" });
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(out, "utf8")).toBe("");
  });
});

describe("a real bwrap sandbox started by a worker with rc files and variables of its own", () => {
  let provider: SandboxProvider;
  let sandbox: Sandbox;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // The worker's own environment while the sandbox starts: its HOME (with the planted rc files),
    // a BASH_ENV and a marker variable.
    for (const [name, value] of Object.entries(workerEnvironment())) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    provider = new BwrapTierProvider({
      workspaceRoot: join(dir, "workspaces"),
      uidRange: { first: 238_500, last: 238_549 },
      poolSize: 0,
    });
    sandbox = await provider.realize({
      tier: "bwrap",
      sessionId: "sess_launcher_env",
      networking: { type: "unrestricted" },
    });
  });
  afterAll(async () => {
    await provider?.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const run = (argv: string[]) =>
    sandbox.exec({ argv, timeoutMs: 10_000, maxOutputBytes: 1 << 16, signal: new AbortController().signal });

  it("its PID 1 carries an empty environment, and no rc file ran or wrote to stderr", async () => {
    // As root this is the private-mounts launcher (unshare, bash, setpriv) as well.
    const seen = await run(["cat", "/proc/1/environ"]);
    expect(seen).toMatchObject({ exitCode: 0, stdout: "", stderr: "" });
    expect(existsSync(marker)).toBe(false);
  });

  it("a long-lived process's launcher is the same: empty PID 1 environment, clean stderr", async () => {
    const process = await sandbox.spawn({
      argv: ["cat", "/proc/1/environ"],
      env: {},
      maxStderrBytes: 4096,
      signal: new AbortController().signal,
    });
    const chunks: Buffer[] = [];
    process.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    process.stdin.end();
    expect(await process.exited).toBe(0);
    expect(Buffer.concat(chunks).toString("utf8")).toBe("");
    expect(process.stderrTail()).toBe("");
    expect(existsSync(marker)).toBe(false);
  });
});
