import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type BwrapSandbox, BwrapTierProvider, bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import type { ExecRequest } from "../../src/sandbox/ports.js";

/**
 * The bwrap tier's live sandbox (one bwrap and supervisor per session) and its warm pool, against
 * real bubblewrap and real processes. A host without bwrap fails this file (it does not skip it).
 */

const IS_ROOT = process.getuid?.() === 0;

let root: string;
let installed = false;
const providers: BwrapTierProvider[] = [];

function run(target: BwrapSandbox, argv: string[], overrides: Partial<ExecRequest> = {}) {
  return target.exec({
    argv,
    timeoutMs: 10_000,
    maxOutputBytes: 1_000_000,
    signal: new AbortController().signal,
    ...overrides,
  });
}

const spec = (sessionId: string) =>
  ({ tier: "bwrap", sessionId, networking: { type: "unrestricted" } }) as const;

function newProvider(
  name: string,
  options: { first: number; size?: number; poolSize?: number; idleTimeoutMs?: number },
) {
  const provider = new BwrapTierProvider({
    workspaceRoot: join(root, name),
    uidRange: { first: options.first, last: options.first + (options.size ?? 100) - 1 },
    poolSize: options.poolSize ?? 0,
    ...(options.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: options.idleTimeoutMs }),
  });
  providers.push(provider);
  return provider;
}

async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface HostProcess {
  pid: number;
  uid: number;
  name: string;
}

/** Live (non-zombie) host processes, from /proc. */
async function hostProcesses(): Promise<HostProcess[]> {
  const found: HostProcess[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    if (status === "" || /^State:\s+Z/m.test(status)) continue;
    found.push({
      pid: Number(pid),
      uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]),
      name: /^Name:\s+(.*)$/m.exec(status)?.[1] ?? "",
    });
  }
  return found;
}

const hostUidOf = (target: BwrapSandbox) => target.owner?.uid ?? process.getuid!();

async function pidsOf(uid: number): Promise<number[]> {
  return (await hostProcesses())
    .filter((p) => p.uid === uid)
    .map((p) => p.pid)
    .sort((a, b) => a - b);
}

/** What runs inside the sandbox, by name, as `ps` there sees it (the `ps` itself included). */
async function insideNames(target: BwrapSandbox): Promise<string[]> {
  const result = await run(target, ["ps", "-eo", "comm="]);
  return result.stdout.split("\n").filter(Boolean).sort();
}

beforeAll(async () => {
  installed = await bwrapAvailable();
  if (!installed) return;
  root = await mkdtemp(join(tmpdir(), "bwrap-live-"));
  // Left 0700 as mkdtemp made it: sandboxes reach their workspaces under a closed parent.
});

beforeEach(() => {
  if (!installed) {
    throw new Error(
      "bubblewrap is not installed on this host: install it (apt-get install -y bubblewrap); .ci/run does this in CI",
    );
  }
});

afterAll(async () => {
  await Promise.all(providers.map((provider) => provider.close()));
  if (root) await rm(root, { recursive: true, force: true });
});

describe("bwrap live sandbox: one bwrap and supervisor per session", () => {
  let provider: BwrapTierProvider;
  let sandbox: BwrapSandbox;

  beforeAll(async () => {
    if (!installed) return;
    provider = newProvider("live", { first: 234_000 });
    sandbox = await provider.realize(spec("s-live"));
  });

  it("runs every command in the same sandbox, each as the leader of a process group of its own", async () => {
    const supervisor = sandbox.process;
    expect(supervisor?.alive).toBe(true);
    const first = await run(sandbox, ["sh", "-c", 'echo "$$ $(ps -o pgid= -p $$)"']);
    const [pid, pgid] = first.stdout.trim().split(/\s+/);
    expect(pgid).toBe(pid);
    await run(sandbox, ["true"]);
    expect(sandbox.process).toBe(supervisor);
    // Inside: bwrap's init, the supervisor, and the command; nothing else.
    expect(await insideNames(sandbox)).toEqual(["bwrap", "ps", "supervisor"]);
  });

  it("kills what a command left in the background when it exits: nothing survives into the next", async () => {
    const hostUid = hostUidOf(sandbox);
    const infrastructure = await pidsOf(hostUid);
    const started = Date.now();
    const result = await run(sandbox, [
      "bash",
      "-c",
      "sleep 100 & setsid sleep 100 & nohup sleep 100 >/dev/null 2>&1 & (sleep 100 &); " +
        "(sleep 0.3; echo late > late.txt) & disown -a; echo started",
    ]);
    // The exec ends with its leader, even though the children hold its output pipes open.
    expect(result).toMatchObject({ stdout: "started\n", exitCode: 0, timedOut: false });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await pidsOf(hostUid)).toEqual(infrastructure);
    expect(await insideNames(sandbox)).toEqual(["bwrap", "ps", "supervisor"]);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await expect(stat(join(sandbox.hostWorkspace, "late.txt"))).rejects.toThrow();
  });

  it("gives each command a fresh /tmp, /dev/shm and IPC, as a sandbox of its own would", async () => {
    const first = await run(sandbox, [
      "sh",
      "-c",
      "echo x > /tmp/a && mkdir /tmp/d && echo y > /dev/shm/b && ipcmk -M 4096 >/dev/null && ipcmk -Q >/dev/null && ls -A /tmp /dev/shm",
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.stdout).toContain("a\nd");
    const second = await run(sandbox, [
      "sh",
      "-c",
      "ls -A /tmp /dev/shm; ipcs -m -q | grep -c '^0x' || true",
    ]);
    expect(second.stdout).toBe("/dev/shm:\n\n/tmp:\n0\n");
  });

  it.runIf(existsSync("/usr/bin/python3"))("removes the POSIX message queues a command left", async () => {
    const opened = await run(sandbox, [
      "python3",
      "-c",
      "import ctypes, os\n" +
        "rt = ctypes.CDLL('librt.so.1', use_errno=True)\n" +
        "print(rt.mq_open(b'/left', os.O_CREAT | os.O_RDWR, 0o600, None) >= 0, os.listdir('/dev/mqueue'))",
    ]);
    expect(opened.stdout).toBe("True ['left']\n");
    expect((await run(sandbox, ["ls", "-A", "/dev/mqueue"])).stdout).toBe("");
  });

  it("bounds /dev/shm like /tmp and keeps the rest of /dev read-only", async () => {
    const shm = await run(sandbox, ["sh", "-c", "head -c 100000000 /dev/zero > /dev/shm/big"]);
    expect(shm.stderr).toMatch(/No space left/);
    const dev = await run(sandbox, ["sh", "-c", "touch /dev/x"]);
    expect(dev.stderr).toMatch(/Read-only file system/);
    expect((await run(sandbox, ["sh", "-c", "echo ok > /dev/null && echo ok"])).stdout).toBe("ok\n");
  });

  it("keeps the supervisor's memory and descriptors out of the commands' reach", async () => {
    const pid = sandbox.process!.supervisorPid!;
    for (const file of ["fd", "mem", "environ"]) {
      const result = await run(sandbox, [
        "sh",
        "-c",
        `ls /proc/${pid}/${file} >/dev/null && cat /proc/${pid}/${file}`,
      ]);
      expect(result.exitCode, file).not.toBe(0);
      expect(result.stderr, file).toMatch(/Permission denied/);
    }
  });

  it("aborting kills the command and everything it started; the sandbox lives on", async () => {
    const hostUid = hostUidOf(sandbox);
    const supervisor = sandbox.process;
    const infrastructure = await pidsOf(hostUid);
    const stop = new AbortController();
    const running = run(sandbox, ["bash", "-c", "setsid sleep 100 & sleep 100"], { signal: stop.signal });
    await eventually(async () => (await pidsOf(hostUid)).length >= infrastructure.length + 2, 3_000);
    const started = Date.now();
    stop.abort(new Error("lost claim"));
    await expect(running).rejects.toThrow(/lost claim/);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await pidsOf(hostUid)).toEqual(infrastructure);
    expect(sandbox.process).toBe(supervisor);
    expect((await run(sandbox, ["echo", "after"])).stdout).toBe("after\n");
  });

  it("reports exit codes, a signal death as null, and a missing command", async () => {
    expect((await run(sandbox, ["sh", "-c", "exit 7"])).exitCode).toBe(7);
    const killed = await run(sandbox, ["sh", "-c", "kill -9 $$"]);
    expect(killed).toMatchObject({ exitCode: null, timedOut: false });
    const missing = await run(sandbox, ["no-such-command"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toMatch(/no-such-command: No such file or directory/);
  });

  it("passes a large stdin, takes a command that ignores it, and returns large output whole", async () => {
    const input = "é".repeat(500_000);
    const counted = await run(sandbox, ["wc", "-c"], { stdin: input });
    expect(counted.stdout.trim()).toBe(String(Buffer.byteLength(input)));
    expect((await run(sandbox, ["true"], { stdin: input })).exitCode).toBe(0);
    const echoed = await run(sandbox, ["cat"], { stdin: input });
    expect(echoed.stdout).toBe(input);
    expect(echoed.truncated).toBe(false);
  });

  it("restarts the sandbox when a command kills the supervisor: same workspace, same uid", async () => {
    const before = sandbox.process!;
    await run(sandbox, ["sh", "-c", "echo kept > kept.txt"]);
    const crash = run(sandbox, ["sh", "-c", "kill -9 $PPID; sleep 5"]);
    await expect(crash).rejects.toThrow(/supervisor died/);
    expect(before.alive).toBe(false);
    const after = await run(sandbox, ["sh", "-c", "cat kept.txt; id -u"]);
    expect(after.stdout).toBe("kept\n1000\n");
    expect(sandbox.process).not.toBe(before);
    expect(sandbox.process!.alive).toBe(true);
    expect((await stat(join(sandbox.hostWorkspace, "kept.txt"))).uid).toBe(hostUidOf(sandbox));
  });

  it("restarts transparently after the sandbox was killed from outside", async () => {
    const before = sandbox.process!;
    process.kill(-before.pid!, "SIGKILL");
    await before.exited;
    expect((await run(sandbox, ["echo", "again"])).stdout).toBe("again\n");
    expect(sandbox.process).not.toBe(before);

    // Killed just as a command is sent: the command runs on a fresh sandbox if the dying one never
    // took it, fails if it did (it may have started); either way the next one runs.
    const dying = sandbox.process!;
    process.kill(-dying.pid!, "SIGKILL");
    const raced = await run(sandbox, ["echo", "raced"]).then(
      (result) => result.stdout,
      (error: Error) => error.message,
    );
    expect(raced).toMatch(/^raced\n$|stopped while the command ran/);
    expect((await run(sandbox, ["echo", "next"])).stdout).toBe("next\n");
  });

  it("gives a command arriving while another runs a sandbox of its own", async () => {
    const slow = run(sandbox, ["sh", "-c", "sleep 0.5; echo slow"]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const fast = await run(sandbox, ["sh", "-c", "ps -eo comm=; sleep 100 &"]);
    // bwrap's init, its own supervisor (the egress relay), the shell and ps: not the slow command.
    expect(fast.stdout.split("\n").filter(Boolean).sort()).toEqual(["bwrap", "ps", "sh", "supervisor"]);
    expect((await slow).stdout).toBe("slow\n");
  });
});

describe("bwrap live sandbox: idle", () => {
  it("stops a sandbox left idle and starts it again on the next command", async () => {
    const provider = newProvider("idle", { first: 234_200, idleTimeoutMs: 200 });
    const sandbox = await provider.realize(spec("s-idle"));
    await run(sandbox, ["sh", "-c", "echo kept > kept.txt"]);
    const before = sandbox.process!;
    expect(await eventually(() => !before.alive, 3_000)).toBe(true);
    expect(await pidsOf(hostUidOf(sandbox))).toEqual([]);
    expect((await run(sandbox, ["cat", "kept.txt"])).stdout).toBe("kept\n");
    expect(sandbox.process).not.toBe(before);
  });
});

describe("bwrap warm pool", () => {
  it("hands a pre-started sandbox to a new session, its slot becoming the workspace, and refills", async () => {
    const provider = newProvider("pool", { first: 235_000, poolSize: 2 });
    await provider.warm();
    expect(provider.pooled).toBe(2);
    const slots = await readdir(join(root, "pool", ".pool"));
    expect(slots).toHaveLength(2);

    const sandbox = await provider.realize(spec("s-pooled"));
    expect(provider.pooled).toBe(1);
    expect(sandbox.process?.alive).toBe(true);
    expect(sandbox.hostWorkspace).toBe(join(root, "pool", "s-pooled"));
    const remaining = await readdir(join(root, "pool", ".pool"));
    expect(remaining).toHaveLength(1);
    // The slot moved: what the session writes lands in its workspace on the host.
    await run(sandbox, ["sh", "-c", "echo mine > file"]);
    expect(await readFile(join(sandbox.hostWorkspace, "file"), "utf8")).toBe("mine\n");
    expect((await stat(sandbox.hostWorkspace)).mode & 0o777).toBe(0o700);
    // And the pool fills up again after the session's first command.
    expect(await eventually(() => provider.pooled === 2, 5_000)).toBe(true);
  });

  it("hands a pre-started sandbox to a session with packages too: its live process is started again with the packages bound", async () => {
    const provider = newProvider("pool-packages", { first: 235_100, poolSize: 1 });
    await provider.warm();
    const pooledSlots = await readdir(join(root, "pool-packages", ".pool"));
    const packagesDir = join(root, "pool-packages-set");
    await mkdir(join(packagesDir, "npm", "node_modules", ".bin"), { recursive: true, mode: 0o755 });
    await writeFile(join(packagesDir, "marker"), "prepared\n", { mode: 0o644 });
    const sandbox = await provider.realize({
      ...spec("s-pooled-packages"),
      preparedPackages: { hash: "set", dir: packagesDir },
    });
    // The pooled slot became its workspace (no sandbox of its own was started for it).
    expect(provider.pooled).toBe(0);
    expect(await readdir(join(root, "pool-packages", ".pool"))).not.toContain(pooledSlots[0]);
    expect(sandbox.process).toBeNull();
    const result = await run(sandbox, ["bash", "-c", "cat /opt/awaken/packages/marker && echo $PATH"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(/^prepared\n.*\/opt\/awaken\/packages\/npm\/node_modules\/\.bin/);
    expect(sandbox.process?.alive).toBe(true);
  });

  it("never lets a pooled sandbox see another session's workspace, and gives each its own uid", async () => {
    const provider = newProvider("isolation", { first: 235_200, poolSize: 2 });
    const sessions: BwrapSandbox[] = [];
    for (const id of ["s-a", "s-b", "s-c"]) {
      await provider.warm();
      sessions.push(await provider.realize(spec(id)));
    }
    const [a, b, c] = sessions as [BwrapSandbox, BwrapSandbox, BwrapSandbox];
    await run(a, ["sh", "-c", "echo secret-of-a > secret"]);
    for (const other of [b, c]) {
      expect((await run(other, ["ls", "-A"])).stdout).toBe("");
      expect((await run(other, ["cat", join(a.hostWorkspace, "secret")])).exitCode).not.toBe(0);
      // Its one workspace mount is its own directory.
      const mounts = (await run(other, ["cat", "/proc/self/mountinfo"])).stdout;
      const workspace = mounts.split("\n").filter((line) => line.split(" ")[4] === "/workspace");
      expect(workspace).toHaveLength(1);
      expect(workspace[0]).toContain(other.hostWorkspace.slice(other.hostWorkspace.lastIndexOf("/")));
      expect(workspace[0]).not.toContain("/s-a ");
    }
    if (IS_ROOT) {
      await provider.warm();
      // Three sessions and two pooled sandboxes: five uids, one supervisor each.
      const supervisors = (await hostProcesses()).filter(
        (p) => p.name === "supervisor" && p.uid >= 235_200 && p.uid < 235_300,
      );
      const uids = supervisors.map((p) => p.uid);
      expect(uids).toHaveLength(5);
      expect(new Set(uids).size).toBe(5);
      expect(new Set(sessions.map(hostUidOf)).size).toBe(3);
    }
  });

  it("leaves an existing workspace alone: the session gets a sandbox of its own over it", async () => {
    const provider = newProvider("existing", { first: 235_400, poolSize: 1 });
    await provider.warm();
    const workspace = join(root, "existing", "s-old");
    await mkdir(workspace, { recursive: true });
    await writeFile(join(workspace, "from-before"), "kept\n");
    const sandbox = await provider.realize(spec("s-old"));
    expect((await run(sandbox, ["cat", "from-before"])).stdout).toBe("kept\n");
    expect(provider.pooled).toBe(1);
  });

  it.runIf(IS_ROOT)(
    "destroy kills the sandbox, frees its uid and never reuses it: six sessions through three uids",
    async () => {
      const provider = newProvider("reuse", { first: 235_600, size: 3, poolSize: 1 });
      const seen: BwrapSandbox[] = [];
      for (let i = 0; i < 6; i += 1) {
        await provider.warm();
        const sandbox = await provider.realize(spec(`s-${i}`));
        for (const earlier of seen) expect(sandbox.process).not.toBe(earlier.process);
        await run(sandbox, ["sh", "-c", "echo $PPID > mine"]);
        // Something still running when the session ends.
        const running = run(sandbox, ["sleep", "100"]).catch(() => null);
        await eventually(async () => (await pidsOf(hostUidOf(sandbox))).length >= 4, 3_000);
        const process = sandbox.process!;
        await provider.destroy(`s-${i}`);
        await running;
        expect(process.alive).toBe(false);
        expect(await pidsOf(hostUidOf(sandbox))).toEqual([]);
        await expect(stat(sandbox.hostWorkspace)).rejects.toThrow();
        seen.push(sandbox);
      }
    },
  );

  it("close kills the pooled sandboxes and removes their slots", async () => {
    const provider = newProvider("closing", { first: 235_800, poolSize: 2 });
    await provider.warm();
    const pooledPids = (await hostProcesses())
      .filter((p) => p.name === "supervisor" && p.uid >= 235_800 && p.uid < 235_900)
      .map((p) => p.pid);
    if (IS_ROOT) expect(pooledPids).toHaveLength(2);
    await provider.close();
    const left = (await hostProcesses()).filter((p) => p.uid >= 235_800 && p.uid < 235_900);
    expect(left).toEqual([]);
    expect(await readdir(join(root, "closing", ".pool"))).toEqual([]);
  });
});
