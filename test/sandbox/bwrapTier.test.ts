import { spawnSync } from "node:child_process";
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BwrapSandbox, BwrapTierProvider, bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import { type ExecRequest, SandboxUnavailableError } from "../../src/sandbox/ports.js";

/**
 * The bwrap tier against real bubblewrap and real processes. A host without bwrap fails this file
 * (it does not skip it): the tier is the Linux default and CI installs it (.ci/run).
 */

const IS_ROOT = process.getuid?.() === 0;
/** ptrace and io_uring_setup, for perl's `syscall`. */
const SYSCALL =
  process.arch === "arm64" ? { ptrace: 117, ioUringSetup: 425 } : { ptrace: 101, ioUringSetup: 425 };

let root: string;
let provider: BwrapTierProvider;
let sandbox: BwrapSandbox;

function run(target: BwrapSandbox, argv: string[], overrides: Partial<ExecRequest> = {}) {
  return target.exec({
    argv,
    timeoutMs: 10_000,
    maxOutputBytes: 1_000_000,
    signal: new AbortController().signal,
    ...overrides,
  });
}

function hostUidOf(target: BwrapSandbox): number {
  return target.owner?.uid ?? process.getuid!();
}

/** Polls until `check` holds or `ms` pass; returns whether it held. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

let installed = false;

beforeAll(async () => {
  installed = await bwrapAvailable();
  if (!installed) return;
  root = await mkdtemp(join(tmpdir(), "bwrap-tier-"));
  // Left 0700 as mkdtemp made it: sandboxes reach their workspaces under a closed parent.
  provider = new BwrapTierProvider({
    workspaceRoot: join(root, "workspaces"),
    uidRange: { first: 231_000, last: 231_999 },
  });
  sandbox = await provider.realize({
    tier: "bwrap",
    sessionId: "s-main",
    networking: { type: "unrestricted" },
  });
});

// Each test fails, rather than skips, on a host without bwrap, and says what to do.
beforeEach(() => {
  if (!installed) {
    throw new Error(
      "bubblewrap is not installed on this host: install it (apt-get install -y bubblewrap); .ci/run does this in CI",
    );
  }
});

afterAll(async () => {
  await provider?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("bwrap tier: what the command can see and touch", () => {
  it("cannot read /etc/shadow or /root", async () => {
    const shadow = await run(sandbox, ["cat", "/etc/shadow"]);
    expect(shadow.exitCode).not.toBe(0);
    const rootHome = await run(sandbox, ["ls", "/root"]);
    expect(rootHome.exitCode).not.toBe(0);
  });

  it("runs as a non-root user that the host sees as the allocated unprivileged uid", async () => {
    const id = await run(sandbox, ["id", "-u"]);
    expect(id.exitCode).toBe(0);
    expect(id.stdout.trim()).not.toBe("0");
    const hostUid = hostUidOf(sandbox);
    expect(hostUid).not.toBe(0);
    if (IS_ROOT) expect(hostUid).toBeGreaterThanOrEqual(231_000);

    // A live command, seen from the host's /proc (besides the sandbox's own bwrap and supervisor).
    const infrastructure = await livePids(hostUid);
    const stop = new AbortController();
    const sleeping = run(sandbox, ["sleep", "30"], { signal: stop.signal }).catch(() => null);
    const seen = await eventually(async () => (await extraPids(hostUid, infrastructure)).length > 0, 3_000);
    stop.abort();
    await sleeping;
    expect(seen).toBe(true);

    // And a file it writes is the host uid's.
    await run(sandbox, ["touch", "owned"]);
    expect((await stat(join(sandbox.hostWorkspace, "owned"))).uid).toBe(hostUid);
  });

  it("cannot write outside /workspace and /tmp", async () => {
    for (const path of ["/usr/x", "/etc/x", "/x", "/bin/x"]) {
      const result = await run(sandbox, ["touch", path]);
      expect(result.exitCode, path).not.toBe(0);
      expect(result.stderr, path).toMatch(/Read-only file system|Permission denied/);
    }
    await expect(stat("/usr/x")).rejects.toThrow();
  });

  it("keeps /workspace across execs and on the host", async () => {
    expect(sandbox.workspacePath).toBe("/workspace");
    const write = await run(sandbox, ["sh", "-c", "pwd && echo hello > note.txt"]);
    expect(write.stdout.trim()).toBe("/workspace");
    const read = await run(sandbox, ["cat", "note.txt"]);
    expect(read.stdout).toBe("hello\n");
    expect(await readFile(join(sandbox.hostWorkspace, "note.txt"), "utf8")).toBe("hello\n");
    const mode = (await stat(sandbox.hostWorkspace)).mode & 0o777;
    expect(mode).toBe(0o700);
  });

  it("inherits no descriptor of the worker's beyond stdio", async () => {
    // `ls` itself holds one (3, the directory it lists).
    const result = await run(sandbox, ["ls", "/proc/self/fd"]);
    expect(result.stdout.split("\n").filter(Boolean).sort()).toEqual(["0", "1", "2", "3"]);
  });

  it("passes stdin to the command", async () => {
    const result = await run(sandbox, ["cat"], { stdin: "from the worker" });
    expect(result.stdout).toBe("from the worker");
  });

  it("bounds /tmp by its tmpfs size", async () => {
    const result = await run(sandbox, ["sh", "-c", "head -c 100000000 /dev/zero > /tmp/big"]);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr).toMatch(/No space left/);
  });

  it("has no TCP to the host's loopback, nor any route out", async () => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const port = (server.address() as { port: number }).port;
      const result = await run(sandbox, ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port}`]);
      expect(result.exitCode).not.toBe(0);
      expect(connections).toBe(0);
      const out = await run(sandbox, ["bash", "-c", "exec 3<>/dev/tcp/1.1.1.1/80"]);
      expect(out.exitCode).not.toBe(0);
      expect(out.stderr).toMatch(/Network is unreachable/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("gets a clean environment, not the worker's", async () => {
    process.env.AWAKEN_PLANTED_SECRET = "sk-planted-7f3a9c";
    try {
      const result = await run(sandbox, ["env"]);
      expect(result.exitCode).toBe(0);
      expect(result.stdout).not.toContain("sk-planted-7f3a9c");
      const names = result.stdout
        .trim()
        .split("\n")
        .map((line) => line.split("=")[0])
        .sort();
      // And the egress proxy's variables (egressProxy.ts), pointing inside the sandbox.
      expect(names).toEqual([
        "HOME",
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "LANG",
        "PATH",
        "PWD",
        "http_proxy",
        "https_proxy",
      ]);
      expect(result.stdout).toContain("HTTPS_PROXY=http://127.0.0.1:3128\n");
    } finally {
      delete process.env.AWAKEN_PLANTED_SECRET;
    }
  });

  it("refuses the syscalls of the seccomp filter", async () => {
    const ptrace = await run(sandbox, [
      "perl",
      "-e",
      `my $r = syscall(${SYSCALL.ptrace}, 0, 0, 0, 0); print "$r ", $!+0`,
    ]);
    expect(ptrace.stdout).toBe("-1 1"); // EPERM; unfiltered, PTRACE_TRACEME succeeds (0).
    const ioUring = await run(sandbox, [
      "perl",
      "-e",
      `my $r = syscall(${SYSCALL.ioUringSetup}, 1, 0); print "$r ", $!+0`,
    ]);
    expect(ioUring.stdout).toBe("-1 1"); // EPERM; unfiltered, a null params pointer gives EFAULT.
    // Without the filter, --disable-userns would answer ENOSPC ("No space left on device").
    const userns = await run(sandbox, ["unshare", "-U", "true"]);
    expect(userns.exitCode).not.toBe(0);
    expect(userns.stderr).toMatch(/Operation not permitted/);
  });
});

describe("bwrap tier: runaway commands", () => {
  it("kills everything a timed-out command started, setsid and nohup children included", async () => {
    const hostUid = hostUidOf(sandbox);
    const infrastructure = await livePids(hostUid);
    const started = Date.now();
    const result = await run(
      sandbox,
      ["bash", "-c", "sleep 100 & setsid sleep 100 & nohup sleep 100 >/dev/null 2>&1 & (sleep 100 &); wait"],
      { timeoutMs: 1_000 },
    );
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(4_000);
    // Nothing is left but the sandbox itself (bwrap, its init and the supervisor), which lives on.
    expect(await extraPids(hostUid, infrastructure)).toEqual([]);
    expect(await livePids(hostUid)).toEqual(infrastructure);
  });

  it("bounds a fork bomb by the process limit, and the sandbox works afterwards", async () => {
    const hostUid = hostUidOf(sandbox);
    const infrastructure = await livePids(hostUid);
    // Long enough for the bomb to reach the process limit on a loaded machine (its forks are slow
    // there); the limit, not the timeout, is what the test checks.
    const bomb = run(sandbox, ["bash", "-c", ":(){ :|:& };: ; sleep 100"], { timeoutMs: 5_000 });
    // Sample back to back, one scan at a time, until the bomb is stopped: overlapping scans on a
    // loaded machine each took long enough to see the bomb's processes come and go.
    let peak = 0;
    let done = false;
    const sampling = (async () => {
      while (!done) {
        peak = Math.max(peak, await liveProcessCount(hostUid));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const result = await bomb;
    done = true;
    await sampling;
    expect(result.timedOut).toBe(true);
    // bash reports the refused forks; the sampled peak stays within RLIMIT_NPROC (256 by default).
    expect(result.stderr).toMatch(/fork: .*Resource temporarily unavailable/);
    expect(peak).toBeGreaterThan(50);
    expect(peak).toBeLessThanOrEqual(256);
    expect(await extraPids(hostUid, infrastructure)).toEqual([]);
    const after = await run(sandbox, ["echo", "still here"]);
    expect(after.stdout).toBe("still here\n");
  });

  it("truncates output past maxOutputBytes", async () => {
    const result = await run(sandbox, ["sh", "-c", "head -c 200000 /dev/zero | tr '\\0' a"], {
      maxOutputBytes: 1_000,
    });
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBe(1_000);
  });
});

describe("bwrap tier: sessions", () => {
  it("gives two sessions different uids and workspaces neither can read", async () => {
    const a = await provider.realize({
      tier: "bwrap",
      sessionId: "s-a",
      networking: { type: "unrestricted" },
    });
    const b = await provider.realize({
      tier: "bwrap",
      sessionId: "s-b",
      networking: { type: "limited", allowed_hosts: ["example.com"] },
    });
    await run(a, ["sh", "-c", "echo secret-of-a > mine"]);
    // The other workspace is not mounted in b at all...
    const fromB = await run(b, ["cat", join(a.hostWorkspace, "mine")]);
    expect(fromB.exitCode).not.toBe(0);
    expect(fromB.stdout).toBe("");
    if (IS_ROOT) {
      expect(a.owner!.uid).not.toBe(b.owner!.uid);
      // ...and even on the host, b's uid cannot read a's workspace (0700, owned by a's uid).
      const onHost = spawnSync("cat", [join(a.hostWorkspace, "mine")], {
        uid: b.owner!.uid,
        gid: b.owner!.gid,
      });
      expect(onHost.status).not.toBe(0);
      expect(onHost.stdout.toString()).toBe("");
    }
  });

  it("realizes idempotently, and destroy deletes the workspace and frees the uid", async () => {
    const spec = { tier: "bwrap", sessionId: "s-idem", networking: { type: "unrestricted" } } as const;
    const first = await provider.realize(spec);
    const second = await provider.realize(spec);
    expect(second).toBe(first);
    await run(first, ["touch", "leftover"]);

    const stop = new AbortController();
    const running = run(first, ["sleep", "30"], { signal: stop.signal });
    await provider.destroy("s-idem");
    await expect(running).rejects.toThrow();
    // Destroy returns once the sandbox is gone: nothing runs as its uid any more.
    if (IS_ROOT) expect(await liveProcessCount(hostUidOf(first))).toBe(0);
    await expect(stat(first.hostWorkspace)).rejects.toThrow();
    await expect(run(first, ["true"])).rejects.toThrow(/destroyed/);

    const again = await provider.realize(spec);
    expect(again).not.toBe(first);
    expect((await run(again, ["ls", "-A"])).stdout).toBe("");
  });

  it.runIf(IS_ROOT)("re-owns a workspace left by another uid without following planted links", async () => {
    const spec = { tier: "bwrap", sessionId: "s-restart", networking: { type: "unrestricted" } } as const;
    const before = await provider.realize(spec);
    await run(before, ["sh", "-c", "mkdir -p d && echo kept > d/file && ln -s /etc/shadow d/shadow"]);
    // A restarted worker: another pool, the same workspace root.
    const restarted = new BwrapTierProvider({
      workspaceRoot: join(root, "workspaces"),
      uidRange: { first: 233_000, last: 233_099 },
    });
    try {
      const after = await restarted.realize(spec);
      expect(after.owner!.uid).not.toBe(before.owner!.uid);
      expect((await run(after, ["cat", "d/file"])).stdout).toBe("kept\n");
      expect((await lstat(join(after.hostWorkspace, "d", "shadow"))).uid).toBe(after.owner!.uid);
      expect((await stat("/etc/shadow")).uid).toBe(0);
    } finally {
      await restarted.close();
    }
  });

  it.runIf(IS_ROOT)(
    "reaches its workspace, egress socket and packages under a 0700 parent, which stays 0700",
    async () => {
      const closed = await mkdtemp(join(tmpdir(), "bwrap-closed-"));
      const workspaces = join(closed, "workspaces");
      const packagesDir = join(workspaces, ".packages", "set");
      await mkdir(packagesDir, { recursive: true, mode: 0o755 });
      await writeFile(join(packagesDir, "marker"), "prepared\n", { mode: 0o644 });
      const reaching = new BwrapTierProvider({ workspaceRoot: workspaces, poolSize: 0 });
      try {
        const inside = await reaching.realize({
          tier: "bwrap",
          sessionId: "s-closed",
          networking: { type: "unrestricted" },
          preparedPackages: { hash: "set", dir: packagesDir },
        });
        const result = await run(inside, [
          "bash",
          "-c",
          "echo written > /workspace/out && cat /workspace/out /opt/awaken/packages/marker && test -S /run/awaken-egress/proxy.sock && echo socket",
        ]);
        expect(result).toMatchObject({ exitCode: 0, stdout: "written\nprepared\nsocket\n" });
        expect((await lstat(join(workspaces, "s-closed", "out"))).uid).toBe(inside.owner!.uid);
        expect((await stat(closed)).mode & 0o777).toBe(0o700);
        // The binds were made in the launcher's private namespace: none reached the host's.
        expect(await readFile("/proc/self/mountinfo", "utf8")).not.toContain("awaken-sandbox-mounts");
      } finally {
        await reaching.close();
        await rm(closed, { recursive: true, force: true });
      }
    },
  );

  it.runIf(IS_ROOT)(
    "/proc inside names no host path in any command line; mountinfo only as the binds' roots",
    async () => {
      const closed = await mkdtemp(join(tmpdir(), "bwrap-proc-"));
      // Passable, so this checks only what /proc shows (reaching a closed parent is tested above).
      await chmod(closed, 0o711);
      const workspaces = join(closed, "workspaces");
      const packagesDir = join(workspaces, ".packages", "set");
      await mkdir(packagesDir, { recursive: true, mode: 0o755 });
      const hidden = new BwrapTierProvider({ workspaceRoot: workspaces, poolSize: 0 });
      try {
        const inside = await hidden.realize({
          tier: "bwrap",
          sessionId: "s-proc",
          networking: { type: "unrestricted" },
          preparedPackages: { hash: "set", dir: packagesDir },
        });
        const cmdlines = await run(inside, [
          "bash",
          "-c",
          'for f in /proc/[0-9]*/cmdline; do tr "\\0" " " < "$f"; echo; done',
        ]);
        expect(cmdlines.stdout).toContain("bwrap");
        expect(cmdlines.stdout).toContain("/workspace");
        for (const host of [closed, "awaken-egress-"]) expect(cmdlines.stdout).not.toContain(host);
        const mountinfo = (await run(inside, ["cat", "/proc/self/mountinfo"])).stdout;
        // The kernel shows a bind's source as its path within its filesystem (field 4): bwrap
        // cannot hide it. Nowhere else does a host path appear.
        const BIND_TARGETS = ["/workspace", "/run/awaken-egress", "/opt/awaken/packages"];
        for (const line of mountinfo.trim().split("\n")) {
          const fields = line.split(" ");
          if (BIND_TARGETS.includes(fields[4]!)) fields[3] = "";
          expect(fields.join(" ")).not.toContain(closed);
          expect(fields.join(" ")).not.toContain("awaken-egress-");
        }
      } finally {
        await hidden.close();
        await rm(closed, { recursive: true, force: true });
      }
    },
  );

  it("refuses with SandboxUnavailableError when bwrap is not installed", async () => {
    const path = process.env.PATH;
    process.env.PATH = join(root, "empty-bin");
    try {
      const bare = new BwrapTierProvider({ workspaceRoot: join(root, "bare") });
      const error = await bare
        .realize({ tier: "bwrap", sessionId: "s-bare", networking: { type: "unrestricted" } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxUnavailableError);
      expect((error as Error).message).toMatch(/apt-get install bubblewrap/);
      await bare.close();
    } finally {
      process.env.PATH = path;
    }
  });
});

/**
 * The host processes running with real uid `uid`, read from /proc, sorted. Zombies are not counted:
 * bwrap's inner init, killed with its namespace, is reparented to host PID 1 and waits there to be
 * reaped; it runs nothing.
 */
async function livePids(uid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    // The directory's owner is the process's uid: a cheap filter before reading its status.
    if ((await stat(`/proc/${pid}`).catch(() => null))?.uid !== uid) continue;
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    const zombie = /^State:\s+Z/m.test(status);
    if (!zombie && Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) === uid) pids.push(Number(pid));
  }
  return pids.sort((a, b) => a - b);
}

async function liveProcessCount(uid: number): Promise<number> {
  return (await livePids(uid)).length;
}

/**
 * The processes of `uid` besides `infrastructure` (the live sandbox's bwrap, its init and its
 * supervisor, taken while it was idle): what commands started and left running.
 */
async function extraPids(uid: number, infrastructure: number[]): Promise<number[]> {
  return (await livePids(uid)).filter((pid) => !infrastructure.includes(pid));
}
