// Sandbox tiers: session creation (realize), first-tool and per-command times for `none` and
// `bwrap` (cold: no warm pool; warm: a pre-started sandbox taken from the pool), against a plain
// spawn of `true`. Run `npm run build` first; it uses dist/. Goal: first tool ≤ 30 ms
// cold and ≤ 5 ms warm for bwrap on this machine.
//
//   node bench/sandbox.mjs [--sessions N] [--commands N]
import { spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { benchArgs } from "./args.mjs";

// Options first: --help needs no build.
const values = benchArgs(import.meta.url, {
  sessions: { type: "string", default: "20" },
  commands: { type: "string", default: "200" },
});

const { BwrapTierProvider, bwrapAvailable } = await import("../dist/sandbox/bwrapTier.js");
const { NoneTierProvider } = await import("../dist/sandbox/noneTier.js");
const { loadPrerequisites, prepareSpawn } = await import("../dist/sandbox/bwrapLaunch.js");
const { DEFAULT_LIMITS } = await import("../dist/sandbox/bwrapArgs.js");
const { execInProcessGroup } = await import("../dist/sandbox/processExec.js");
const { HAND_TOOLS } = await import("../dist/runtime/hand/index.js");

const SESSIONS = Number(values.sessions);
const COMMANDS = Number(values.commands);
const GOAL = { coldMs: 30, warmMs: 5 };
const signal = new AbortController().signal;
const request = (argv) => ({ argv, timeoutMs: 10_000, maxOutputBytes: 1_000_000, signal });
const spec = (tier, sessionId) => ({ tier, sessionId, networking: { type: "unrestricted" } });

function quantile(samples, q) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
const median = (samples) => quantile(samples, 0.5);
const p99 = (samples) => quantile(samples, 0.99);
const ms = (value) => (value === undefined ? "—" : value.toFixed(2));

async function timed(fn) {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

function plainTrue() {
  return new Promise((resolve, reject) => {
    const child = spawn("true", [], { stdio: "ignore" });
    child.on("error", reject);
    child.on("exit", resolve);
  });
}

/** `count` sequential runs of `fn`, their times in ms. */
async function repeat(count, fn) {
  const samples = [];
  for (let i = 0; i < count; i += 1) samples.push((await timed(fn)).ms);
  return samples;
}

/** Resident memory (kB) of every live process of `uid`: what an idle sandbox costs. */
async function residentKb(uid) {
  let total = 0;
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
    if (Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) !== uid || /^State:\s+Z/m.test(status)) continue;
    total += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return total;
}

/** The Hand `bash` tool running `true`: the wrapper restores and saves the shell state. */
async function bashTool(sandbox) {
  const result = await HAND_TOOLS.get("bash").run(sandbox, { command: "true" }, signal);
  if (result.isError) throw new Error(`bash tool: ${result.text}`);
}

async function trueExec(sandbox) {
  const result = await sandbox.exec(request(["true"]));
  if (result.exitCode !== 0) throw new Error(`true exited ${result.exitCode}`);
}

/**
 * Sessions realized one after another: realize, then the first command, each timed. Twice: with
 * `true` as the first command, and with a first Hand `bash` tool call.
 */
async function sessions(provider, tier, prefix, beforeEach = async () => {}) {
  const timings = { realize: [], first: [], total: [], bashTotal: [] };
  for (const [pass, first] of [
    ["t", trueExec],
    ["b", bashTool],
  ]) {
    for (let i = 0; i < SESSIONS; i += 1) {
      await beforeEach();
      const id = `${prefix}-${pass}${i}`;
      const r = await timed(() => provider.realize(spec(tier, id)));
      const f = await timed(() => first(r.value));
      if (pass === "t") {
        timings.realize.push(r.ms);
        timings.first.push(f.ms);
        timings.total.push(r.ms + f.ms);
      } else {
        timings.bashTotal.push(r.ms + f.ms);
      }
      await provider.destroy(id);
    }
  }
  return timings;
}

const rows = [];
const root = await mkdtemp(join(tmpdir(), "bench-sandbox-"));
await chmod(root, 0o711);
const memory = {};
try {
  const plain = await repeat(COMMANDS, plainTrue);
  rows.push({ name: "plain spawn('true')", perCommand: plain });

  const none = new NoneTierProvider(join(root, "none"));
  const noneSessions = await sessions(none, "none", "n");
  const noneSandbox = await none.realize(spec("none", "n-steady"));
  const nonePer = await repeat(COMMANDS, () => noneSandbox.exec(request(["true"])));
  rows.push({ name: "none", ...noneSessions, perCommand: nonePer });
  await none.close();

  if (!(await bwrapAvailable())) {
    console.log("bubblewrap is not installed: apt-get install -y bubblewrap; bwrap rows skipped");
  } else {
    const uidRange = (first) => ({ first, last: first + 999 });

    const cold = new BwrapTierProvider({
      workspaceRoot: join(root, "cold"),
      uidRange: uidRange(240_000),
      poolSize: 0,
    });
    try {
      const coldSessions = await sessions(cold, "bwrap", "c");
      const steady = await cold.realize(spec("bwrap", "c-steady"));
      await steady.exec(request(["true"]));
      const per = await repeat(COMMANDS, () => steady.exec(request(["true"])));
      rows.push({ name: "bwrap cold (no pool)", ...coldSessions, perCommand: per });
      if (steady.owner) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        memory.idleSandboxKb = await residentKb(steady.owner.uid);
      }
    } finally {
      await cold.close();
    }

    const warm = new BwrapTierProvider({
      workspaceRoot: join(root, "warm"),
      uidRange: uidRange(241_000),
      poolSize: 1,
    });
    try {
      // Each session finds a ready sandbox: the pool is refilled between sessions, off the clock.
      const warmSessions = await sessions(warm, "bwrap", "w", () => warm.warm());
      await warm.warm();
      const steady = await warm.realize(spec("bwrap", "w-steady"));
      const per = await repeat(COMMANDS, () => steady.exec(request(["true"])));
      rows.push({ name: "bwrap warm (pool of 1)", ...warmSessions, perCommand: per });
    } finally {
      await warm.close();
    }

    // The design this replaced: a fresh bwrap per command (still what a concurrent second exec
    // of one session gets).
    const prerequisites = await loadPrerequisites();
    try {
      const workspace = join(root, "cold");
      const uid = process.getuid?.() === 0 ? 242_000 : undefined;
      const launch = {
        prerequisites,
        limits: DEFAULT_LIMITS,
        owner: uid === undefined ? null : { uid, gid: uid },
        workspaceHostPath: workspace,
      };
      const oneShot = await repeat(Math.min(COMMANDS, 50), async () => {
        const prepared = await prepareSpawn(launch, ["true"]);
        try {
          return await execInProcessGroup(
            prepared.command,
            prepared.args,
            request(["true"]),
            prepared.options,
          );
        } finally {
          await prepared.close();
        }
      });
      rows.push({ name: "bwrap one-shot per command (before)", perCommand: oneShot });
    } finally {
      await rm(prerequisites.stateDir, { recursive: true, force: true });
    }
  }
} finally {
  await rm(root, { recursive: true, force: true });
}

const plainMedian = median(rows[0].perCommand);
console.log(
  `\nSandbox tiers, ms. first tool = realize + first exec of \`true\` (${SESSIONS} sessions); first bash tool = ` +
    `realize + a first Hand \`bash\` tool call (${SESSIONS} more); per-cmd = ${COMMANDS} sequential \`true\` in one sandbox`,
);
const header = [
  "tier",
  "realize p50",
  "first exec p50",
  "first tool p50",
  "first tool p99",
  "first bash tool p50",
  "per-cmd p50",
  "per-cmd p99",
  "p50 over spawn",
  "× spawn",
];
const table = rows.map((row) => [
  row.name,
  ms(row.realize && median(row.realize)),
  ms(row.first && median(row.first)),
  ms(row.total && median(row.total)),
  ms(row.total && p99(row.total)),
  ms(row.bashTotal && median(row.bashTotal)),
  ms(median(row.perCommand)),
  ms(p99(row.perCommand)),
  ms(median(row.perCommand) - plainMedian),
  (median(row.perCommand) / plainMedian).toFixed(1),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
const line = (cells) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
console.log(
  `${cpus().length} CPUs, load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")} at the end (a busy machine inflates every figure)`,
);
console.log(line(header));
for (const row of table) console.log(line(row));

const byName = Object.fromEntries(rows.map((row) => [row.name, row]));
const cold = byName["bwrap cold (no pool)"];
const warm = byName["bwrap warm (pool of 1)"];
const before = byName["bwrap one-shot per command (before)"];
if (cold && warm) {
  const coldFirst = median(cold.total);
  const warmFirst = median(warm.total);
  console.log(
    `\nGoal: first tool ≤ ${GOAL.coldMs} ms cold: ${ms(coldFirst)} ms ${coldFirst <= GOAL.coldMs ? "MET" : "NOT MET"}; ` +
      `≤ ${GOAL.warmMs} ms warm: ${ms(warmFirst)} ms ${warmFirst <= GOAL.warmMs ? "MET" : "NOT MET"}`,
  );
  if (before) {
    console.log(
      `Per command: live sandbox ${ms(median(warm.perCommand))} ms vs one-shot ${ms(median(before.perCommand))} ms ` +
        `(${(median(before.perCommand) / median(warm.perCommand)).toFixed(1)}× faster)`,
    );
  }
  if (memory.idleSandboxKb !== undefined) {
    console.log(
      `Idle live sandbox (bwrap, its init, the supervisor): ${(memory.idleSandboxKb / 1024).toFixed(1)} MB RSS`,
    );
  }
}
