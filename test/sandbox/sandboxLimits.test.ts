/**
 * A bwrap sandbox's memory limit and its workspace's disk quota, with real bwrap and small limits
 * (so each test is cheap): going over is a tool error the model reads, the host and the worker
 * are untouched, and the sandbox keeps serving.
 */
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HAND_TOOLS } from "../../src/runtime/hand/index.js";
import { type BwrapSandbox, BwrapTierProvider, bwrapAvailable } from "../../src/sandbox/bwrapTier.js";
import { sandboxLimitsFromEnv } from "../../src/sandbox/limitsFromEnv.js";
import type { ExecResult } from "../../src/sandbox/ports.js";
import { planMemory } from "../../src/sandbox/sandboxMemory.js";

const hasBwrap = await bwrapAvailable();
const cgroupHere = (await planMemory().catch(() => null))?.enforcement.startsWith("cgroup") ?? false;
const MiB = 2 ** 20;
const signal = new AbortController().signal;

/** Host processes running as `uid` (from /proc). */
function uidProcesses(uid: number): number {
  let count = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] === String(uid)) count += 1;
    } catch {
      // Gone meanwhile.
    }
  }
  return count;
}

/** A command building a string of `mib` MiB in the sandbox (perl is there wherever the tier runs). */
const allocation = (mib: number, then = "") =>
  `perl -e 'my $x = "a" x (${mib} * 2**20); print length($x), "\\n"; ${then}'`;
const allocate = (mib: number) => ["bash", "-c", allocation(mib)];

describe.skipIf(!hasBwrap)("sandbox resource limits", () => {
  let root: string;
  const providers: BwrapTierProvider[] = [];
  let sessions = 0;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "limits-"));
    await chmod(root, 0o711);
  });
  afterAll(async () => {
    await Promise.all(providers.map((provider) => provider.close()));
    await rm(root, { recursive: true, force: true });
  });

  function provider(options: Partial<ConstructorParameters<typeof BwrapTierProvider>[0]>): BwrapTierProvider {
    const created = new BwrapTierProvider({
      workspaceRoot: join(root, `w${providers.length}`),
      uidRange: { first: 236_000 + providers.length * 50, last: 236_049 + providers.length * 50 },
      poolSize: 0,
      ...options,
    });
    providers.push(created);
    return created;
  }

  async function fresh(tier: BwrapTierProvider): Promise<BwrapSandbox> {
    sessions += 1;
    return tier.realize({ tier: "bwrap", sessionId: `s${sessions}`, networking: { type: "unrestricted" } });
  }

  const run = (sandbox: BwrapSandbox, argv: string[], timeoutMs = 8_000): Promise<ExecResult> =>
    sandbox.exec({ argv, timeoutMs, maxOutputBytes: 64 * 1024, signal });

  it.skipIf(!cgroupHere)(
    "kills a command that goes over the sandbox's memory limit (a cgroup) and says so; the sandbox goes on",
    async () => {
      const tier = provider({ limits: { memoryBytes: 96 * MiB } });
      const sandbox = await fresh(tier);
      const started = Date.now();
      const over = await run(sandbox, allocate(400));
      expect(over.limitHit).toMatch(/memory limit \(96 MiB\) was reached/);
      expect(over.exitCode).toBeNull();
      expect(Date.now() - started).toBeLessThan(8_000);
      // The kernel held the sandbox to its limit: the host never lent it more.
      expect(await sandbox.cgroup?.peakBytes()).toBeLessThanOrEqual(96 * MiB);
      const under = await run(sandbox, allocate(16));
      expect(under.stdout).toBe(`${16 * MiB}\n`);
      expect(under.limitHit).toBeUndefined();
      // The bash tool's result names the limit.
      const tool = await HAND_TOOLS.get("bash")!.run(sandbox, { command: allocation(400) }, signal);
      expect(tool.isError).toBe(true);
      expect(tool.text).toMatch(/memory limit \(96 MiB\) was reached/);
    },
  );

  it.skipIf(!cgroupHere)("bounds the sum of the sandbox's processes, not each one", async () => {
    const tier = provider({ limits: { memoryBytes: 96 * MiB } });
    const sandbox = await fresh(tier);
    const script = allocation(40, "sleep 2");
    const over = await run(sandbox, [
      "bash",
      "-c",
      `${script} & ${script} & ${script} & failed=0; for job in $(jobs -p); do wait $job || failed=1; done; exit $failed`,
    ]);
    expect(over.limitHit).toMatch(/memory limit \(96 MiB\)/);
    expect(await sandbox.cgroup?.peakBytes()).toBeLessThanOrEqual(96 * MiB);
  });

  it.skipIf(!cgroupHere)(
    "holds a command run beside another (a one-shot sandbox) to the same limit",
    async () => {
      const tier = provider({ limits: { memoryBytes: 96 * MiB } });
      const sandbox = await fresh(tier);
      const processesBefore = sandbox.owner ? uidProcesses(sandbox.owner.uid) : 0;
      const beside = run(sandbox, ["sleep", "1"]);
      const over = await run(sandbox, allocate(400));
      expect(over.limitHit).toMatch(/memory limit \(96 MiB\) was reached/);
      const besideResult = await beside;
      expect(besideResult.exitCode).toBe(0);
      expect(besideResult.limitHit).toBeUndefined();
      // Nothing of the one-shot is left on the host.
      if (sandbox.owner) expect(uidProcesses(sandbox.owner.uid)).toBe(processesBefore);
    },
  );

  it("falls back to a per-process limit (RLIMIT_DATA) where no cgroup is used, and says what it is", async () => {
    const tier = provider({ limits: { memoryBytes: 96 * MiB }, memory: { enforcement: "rlimit" } });
    const sandbox = await fresh(tier);
    expect(sandbox.cgroup).toBeUndefined();
    const over = await run(sandbox, allocate(400));
    expect(over.exitCode).not.toBe(0);
    expect(over.stderr).toMatch(/out of memory/i);
    expect(over.limitHit).toMatch(/each process of this sandbox may use at most 96 MiB/);
    expect((await run(sandbox, allocate(16))).stdout).toBe(`${16 * MiB}\n`);
  });

  it("refuses at start when an operator demands a cgroup the host cannot give", async () => {
    const tier = provider({ memory: { enforcement: "cgroup", cgroupParent: join(root, "no-such-cgroup") } });
    await expect(tier.warm()).rejects.toThrow(/no writable memory cgroup/);
  });

  it("reports a command that takes the workspace past its disk quota; earlier files stay intact", async () => {
    const tier = provider({ limits: { workspaceBytes: 20 * MiB } });
    const sandbox = await fresh(tier);
    const first = await run(sandbox, ["bash", "-c", "head -c 15M /dev/zero > first.bin"]);
    expect(first).toMatchObject({ exitCode: 0 });
    expect(first.limitHit).toBeUndefined();
    const second = await run(sandbox, ["bash", "-c", "head -c 15M /dev/zero > second.bin"]);
    expect(second.limitHit).toMatch(/disk quota \(20 MiB\) was exceeded/);
    expect((await stat(join(sandbox.hostWorkspace, "first.bin"))).size).toBe(15 * MiB);
    // Deleting is always possible, and brings the workspace back under its quota.
    const cleaned = await run(sandbox, ["rm", "second.bin"]);
    expect(cleaned).toMatchObject({ exitCode: 0 });
    expect(cleaned.limitHit).toBeUndefined();
    const tool = await HAND_TOOLS.get("bash")!.run(
      sandbox,
      { command: "head -c 15M /dev/zero > third.bin" },
      signal,
    );
    expect(tool.isError).toBe(true);
    expect(tool.text).toMatch(/disk quota \(20 MiB\) was exceeded/);
    await run(sandbox, ["rm", "third.bin"]);
    const written = await HAND_TOOLS.get("write")!.run(
      sandbox,
      { file_path: "fourth.txt", content: "x".repeat(15 * MiB) },
      signal,
    );
    expect(written.isError).toBe(true);
    expect(written.text).toMatch(/disk quota \(20 MiB\) was exceeded/);
  });

  it("never lets one file outgrow the quota, and stops a command still writing past it", async () => {
    const tier = provider({ limits: { workspaceBytes: 20 * MiB }, quotaPollMs: 100 });
    const sandbox = await fresh(tier);
    const big = await run(sandbox, ["bash", "-c", "head -c 30M /dev/zero > big.bin"]);
    expect(big.exitCode).not.toBe(0);
    expect((await stat(join(sandbox.hostWorkspace, "big.bin"))).size).toBeLessThanOrEqual(20 * MiB);
    await run(sandbox, ["rm", "big.bin"]);
    const started = Date.now();
    const writer = await run(
      sandbox,
      ["bash", "-c", "for i in $(seq 100); do head -c 2M /dev/zero > f$i; sleep 0.05; done"],
      20_000,
    );
    expect(writer.limitHit).toMatch(
      /disk quota \(20 MiB\) was exceeded: it holds .* and the command was stopped/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await run(sandbox, ["bash", "-c", "ls | wc -l"])).stdout.trim()).not.toBe("100");
  });

  it("counts files and directories in the quota: a command creating too many is stopped and reported; earlier files stay intact", async () => {
    const tier = provider({ limits: { workspaceInodes: 2_000 }, quotaPollMs: 100 });
    const sandbox = await fresh(tier);
    const first = await run(sandbox, ["bash", "-c", "mkdir kept && echo hello > kept/a.txt && touch kept/b"]);
    expect(first).toMatchObject({ exitCode: 0 });
    expect(first.limitHit).toBeUndefined();
    // Empty files cost du no bytes: only the inode count sees them.
    const started = Date.now();
    const flood = await run(
      sandbox,
      ["bash", "-c", "mkdir flood && cd flood && for i in $(seq 20000); do : > f$i; done"],
      20_000,
    );
    expect(flood.limitHit).toMatch(
      /file limit \(2000 files and directories\) was exceeded: it holds \d+ and the command was stopped/,
    );
    expect(flood.limitHit).not.toMatch(/disk quota/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(readFileSync(join(sandbox.hostWorkspace, "kept", "a.txt"), "utf8")).toBe("hello\n");
    expect(readdirSync(join(sandbox.hostWorkspace, "flood")).length).toBeLessThan(20_000);
    // The bash tool's result names the limit, as for bytes.
    const tool = await HAND_TOOLS.get("bash")!.run(sandbox, { command: "touch flood/one-more" }, signal);
    expect(tool.isError).toBe(true);
    expect(tool.text).toMatch(/file limit \(2000 files and directories\) was exceeded/);
    // Deleting brings the workspace back under its limit.
    const cleaned = await run(sandbox, ["rm", "-rf", "flood"]);
    expect(cleaned).toMatchObject({ exitCode: 0 });
    expect(cleaned.limitHit).toBeUndefined();
    expect((await run(sandbox, ["touch", "kept/c"])).limitHit).toBeUndefined();
  });
});

describe("the operator's workspace limits", () => {
  it("reads the file limit from AWAKEN_SANDBOX_INODE_QUOTA and refuses one that is not a sane count", () => {
    expect(sandboxLimitsFromEnv({ AWAKEN_SANDBOX_INODE_QUOTA: "250000" }).limits).toEqual({
      workspaceInodes: 250_000,
    });
    for (const bad of ["lots", "10", "1e6", "-5", "2.5"]) {
      expect(() => sandboxLimitsFromEnv({ AWAKEN_SANDBOX_INODE_QUOTA: bad })).toThrow(
        /AWAKEN_SANDBOX_INODE_QUOTA must be a whole number of at least 1000/,
      );
    }
  });
});
