// Sandbox tiers: session creation (realize), first-tool and per-command times for `none`, `bwrap`
// and `container` (cold: no warm pool; warm: a pre-started sandbox taken from the pool), against a
// plain spawn of `true`, with the container/bwrap ratios of the same run. The first command is
// `echo ok` (its output checked), through the tier's exec and through the Hand `bash` tool the
// runtime calls. Run `npm run build` first (`npm run bench:sandbox` does both); it uses dist/.
// Goal: first tool ≤ 30 ms cold and ≤ 5 ms warm for bwrap on this machine.
//
// The container rows build their own test image from host binaries (podman import, as the
// container tier's test does; its time is printed, off every clock: a worker pays it once) and
// remove it at the end. A tier this host lacks (no bubblewrap; no podman/runc, or not root) is
// skipped with a line saying why; the other rows still run.
//
//   node bench/sandbox.mjs [--sessions N] [--commands N] [--tiers none,bwrap,container]
import { execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { benchArgs } from "./args.mjs";

// Options first: --help needs no build.
const values = benchArgs(import.meta.url, {
  sessions: { type: "string", default: "20" },
  commands: { type: "string", default: "200" },
  tiers: { type: "string", default: "none,bwrap,container" },
});

const { BwrapTierProvider, bwrapAvailable } = await import("../dist/sandbox/bwrapTier.js");
const { NoneTierProvider } = await import("../dist/sandbox/noneTier.js");
const { loadPrerequisites, prepareSpawn } = await import("../dist/sandbox/bwrapLaunch.js");
const { DEFAULT_LIMITS } = await import("../dist/sandbox/bwrapArgs.js");
const { execInProcessGroup } = await import("../dist/sandbox/processExec.js");
const { HAND_TOOLS } = await import("../dist/runtime/hand/index.js");

const SESSIONS = Number(values.sessions);
const COMMANDS = Number(values.commands);
const TIERS = new Set(values.tiers.split(",").map((tier) => tier.trim()));
for (const tier of TIERS) {
  if (!["none", "bwrap", "container"].includes(tier)) {
    process.stderr.write(`sandbox.mjs: --tiers takes none, bwrap and container, not "${tier}"\n`);
    process.exit(2);
  }
}
const run = promisify(execFile);
const GOAL = { coldMs: 30, warmMs: 5 };
const signal = new AbortController().signal;
const request = (argv) => ({ argv, timeoutMs: 10_000, maxOutputBytes: 1_000_000, signal });
const spec = (tier, sessionId, image) => ({
  tier,
  sessionId,
  networking: { type: "unrestricted" },
  ...(image === undefined ? {} : { image }),
});
const loadAverage = () =>
  loadavg()
    .map((load) => load.toFixed(1))
    .join(" ");

function quantile(samples, q) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
const median = (samples) => quantile(samples, 0.5);
const p90 = (samples) => quantile(samples, 0.9);
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

/** The Hand `bash` tool running `echo ok`: the wrapper restores and saves the shell state. */
async function bashTool(sandbox) {
  const result = await HAND_TOOLS.get("bash").run(sandbox, { command: "echo ok" }, signal);
  if (result.isError || !result.text.startsWith("ok\n")) throw new Error(`bash tool: ${result.text}`);
}

/** `echo ok` through the tier's exec, its output checked: the command really ran in the sandbox. */
async function echoExec(sandbox) {
  const result = await sandbox.exec(request(["echo", "ok"]));
  if (result.exitCode !== 0 || result.stdout !== "ok\n")
    throw new Error(`echo ok: exit ${result.exitCode}, stdout ${JSON.stringify(result.stdout)}`);
}

async function trueExec(sandbox) {
  const result = await sandbox.exec(request(["true"]));
  if (result.exitCode !== 0) throw new Error(`true exited ${result.exitCode}`);
}

/**
 * Sessions realized one after another: realize, then the first command, each timed. Twice: with
 * `echo ok` through the tier's exec as the first command, and with a first Hand `bash` tool call.
 */
async function sessions(provider, tier, prefix, { beforeEach = async () => {}, image } = {}) {
  const timings = { realize: [], first: [], total: [], bashTotal: [] };
  for (const [pass, first] of [
    ["e", echoExec],
    ["b", bashTool],
  ]) {
    for (let i = 0; i < SESSIONS; i += 1) {
      await beforeEach();
      const id = `${prefix}-${pass}${i}`;
      const r = await timed(() => provider.realize(spec(tier, id, image)));
      const f = await timed(() => first(r.value));
      if (pass === "e") {
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

/** Lines saying which rows were skipped and why, printed with the table. */
const skipped = [];
const notes = [];
const uidRange = (first) => ({ first, last: first + 999 });

async function bwrapRows(rows, root, memory) {
  if (!(await bwrapAvailable())) {
    skipped.push("bwrap rows skipped: bubblewrap is not installed (apt-get install -y bubblewrap)");
    return;
  }
  const cold = new BwrapTierProvider({
    workspaceRoot: join(root, "cold"),
    uidRange: uidRange(240_000),
    poolSize: 0,
  });
  try {
    const coldSessions = await sessions(cold, "bwrap", "c");
    const steady = await cold.realize(spec("bwrap", "c-steady"));
    await steady.exec(request(["true"]));
    const per = await repeat(COMMANDS, () => trueExec(steady));
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
    const warmSessions = await sessions(warm, "bwrap", "w", { beforeEach: () => warm.warm() });
    await warm.warm();
    const steady = await warm.realize(spec("bwrap", "w-steady"));
    const per = await repeat(COMMANDS, () => trueExec(steady));
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
        return await execInProcessGroup(prepared.command, prepared.args, request(["true"]), prepared.options);
      } finally {
        await prepared.close();
      }
    });
    rows.push({ name: "bwrap one-shot per command (before)", perCommand: oneShot });
  } finally {
    await rm(prerequisites.stateDir, { recursive: true, force: true });
  }
}

/**
 * The container tier, cold and warm, over a test image built here from the host's binaries (as
 * test/sandbox/containerTier.test.ts does), removed at the end whatever happens.
 */
async function containerRows(rows, root) {
  const { ContainerTierProvider } = await import("../dist/sandbox/containerTier.js");
  const { probeContainerHost, CONTAINER_INSTALL_HINT } = await import("../dist/sandbox/containerHost.js");
  const host = await probeContainerHost();
  if ("missing" in host) {
    skipped.push(`container rows skipped: ${host.missing} (${CONTAINER_INSTALL_HINT})`);
    return;
  }
  if (process.getuid?.() !== 0) {
    skipped.push("container rows skipped: the container tier needs a worker running as root");
    return;
  }
  // Node strips the types of this TypeScript helper itself: the bench and the test share one image recipe.
  const { buildSandboxImage } = await import("../test/support/sandboxImage.ts");
  let image;
  try {
    const built = await timed(async () => buildSandboxImage());
    image = built.value;
    notes.push(
      `container test image built and imported in ${ms(built.ms)} ms (once per worker, off every clock)`,
    );
  } catch (error) {
    skipped.push(
      `container rows skipped: its test image could not be built (${error.message.split("\n")[0]})`,
    );
    return;
  }
  const provider = (name, first, poolSize) =>
    new ContainerTierProvider({
      workspaceRoot: join(root, name),
      allowedImages: [image.reference],
      uidRange: uidRange(first),
      poolSize,
    });
  try {
    const cold = provider("container-cold", 243_000, 0);
    try {
      const coldSessions = await sessions(cold, "container", "cc", { image: image.reference });
      const steady = await cold.realize(spec("container", "cc-steady", image.reference));
      await steady.exec(request(["true"]));
      const per = await repeat(COMMANDS, () => trueExec(steady));
      rows.push({ name: "container cold (no pool)", ...coldSessions, perCommand: per });
      notes.push(await inspectCost(host.podmanPath));
    } finally {
      await cold.close();
    }

    const warm = provider("container-warm", 244_000, 1);
    try {
      // As bwrap's: the pool is refilled between sessions, off the clock.
      const warmSessions = await sessions(warm, "container", "cw", {
        beforeEach: () => warm.warm(image.reference),
        image: image.reference,
      });
      await warm.warm(image.reference);
      const steady = await warm.realize(spec("container", "cw-steady", image.reference));
      const per = await repeat(COMMANDS, () => trueExec(steady));
      rows.push({ name: "container warm (pool of 1)", ...warmSessions, perCommand: per });
    } finally {
      await warm.close();
    }
  } finally {
    image.remove();
  }
}

/**
 * What `podman inspect` of a running container costs: a container's first exec waits for one (its
 * memory cgroup is looked up to tell an OOM kill apart, containerMemory.ts), later execs do not.
 */
async function inspectCost(podmanPath) {
  const env = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };
  const { stdout } = await run(
    podmanPath,
    ["ps", "--filter", `label=io.awaken.sandbox=${process.pid}`, "--format", "{{.Names}}"],
    { env },
  );
  const name = stdout.split("\n")[0];
  if (!name) return "podman inspect: no running container of this bench found to time";
  const samples = await repeat(10, () =>
    run(podmanPath, ["inspect", "--format", "{{.State.Pid}}", name], { env, timeout: 10_000 }),
  );
  return (
    `podman inspect of a running container (10 runs; a container's first exec waits for one, ` +
    `later execs do not): p50 ${ms(median(samples))} ms, p90 ${ms(p90(samples))} ms`
  );
}

const rows = [];
const root = await mkdtemp(join(tmpdir(), "bench-sandbox-"));
await chmod(root, 0o711);
const memory = {};
const loadAtStart = loadAverage();
try {
  const plain = await repeat(COMMANDS, plainTrue);
  rows.push({ name: "plain spawn('true')", perCommand: plain });

  if (TIERS.has("none")) {
    const none = new NoneTierProvider(join(root, "none"));
    const noneSessions = await sessions(none, "none", "n");
    const noneSandbox = await none.realize(spec("none", "n-steady"));
    const nonePer = await repeat(COMMANDS, () => trueExec(noneSandbox));
    rows.push({ name: "none", ...noneSessions, perCommand: nonePer });
    await none.close();
  }
  if (TIERS.has("bwrap")) await bwrapRows(rows, root, memory);
  if (TIERS.has("container")) await containerRows(rows, root);
} finally {
  await rm(root, { recursive: true, force: true });
}

const plainMedian = median(rows[0].perCommand);
console.log(
  `\nSandbox tiers, ms. first tool = realize + first exec of \`echo ok\` (${SESSIONS} sessions); first bash tool = ` +
    `realize + a first Hand \`bash\` tool call running \`echo ok\` (${SESSIONS} more); per-cmd = ${COMMANDS} ` +
    "sequential `true` in one live sandbox (realize left out); realize and first exec are the first tool's two parts",
);
const header = [
  "tier",
  "realize p50",
  "first exec p50",
  "first tool p50",
  "first tool p90",
  "first bash tool p50",
  "first bash tool p90",
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
  ms(row.total && p90(row.total)),
  ms(row.bashTotal && median(row.bashTotal)),
  ms(row.bashTotal && p90(row.bashTotal)),
  ms(median(row.perCommand)),
  ms(p99(row.perCommand)),
  ms(median(row.perCommand) - plainMedian),
  (median(row.perCommand) / plainMedian).toFixed(1),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
const line = (cells) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
console.log(
  `${cpus().length} CPUs, load average ${loadAtStart} at the start and ${loadAverage()} at the end ` +
    "(a busy machine inflates every figure)",
);
for (const note of notes) console.log(note);
for (const skip of skipped) console.log(skip);
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

// The same user-visible steps on both tiers, same run: how many times bwrap's time the container takes.
const ratioRows = [];
for (const mode of ["cold (no pool)", "warm (pool of 1)"]) {
  const bwrap = byName[`bwrap ${mode}`];
  const container = byName[`container ${mode}`];
  if (!bwrap || !container) continue;
  for (const [what, key] of [
    ["first tool", "total"],
    ["first bash tool", "bashTotal"],
    ["realize alone", "realize"],
    ["first exec alone", "first"],
  ]) {
    ratioRows.push([
      `${mode.split(" ")[0]} ${what}`,
      ms(median(container[key])),
      ms(median(bwrap[key])),
      (median(container[key]) / median(bwrap[key])).toFixed(1),
      ms(p90(container[key])),
      ms(p90(bwrap[key])),
      (p90(container[key]) / p90(bwrap[key])).toFixed(1),
    ]);
  }
  ratioRows.push([
    `${mode.split(" ")[0]} per-cmd (live sandbox)`,
    ms(median(container.perCommand)),
    ms(median(bwrap.perCommand)),
    (median(container.perCommand) / median(bwrap.perCommand)).toFixed(1),
    ms(p90(container.perCommand)),
    ms(p90(bwrap.perCommand)),
    (p90(container.perCommand) / p90(bwrap.perCommand)).toFixed(1),
  ]);
}
if (ratioRows.length > 0) {
  const ratioHeader = [
    "container / bwrap",
    "container p50",
    "bwrap p50",
    "× p50",
    "container p90",
    "bwrap p90",
    "× p90",
  ];
  const ratioWidths = ratioHeader.map((h, i) => Math.max(h.length, ...ratioRows.map((r) => r[i].length)));
  const ratioLine = (cells) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(ratioWidths[i]) : c.padStart(ratioWidths[i]))).join("  ");
  console.log(
    "\nContainer against bwrap, ms (first tool and first bash tool are what a session waits for; " +
      "the `alone` rows are its parts, each leaving the other out)",
  );
  console.log(ratioLine(ratioHeader));
  for (const row of ratioRows) console.log(ratioLine(row));
}
