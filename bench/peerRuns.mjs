// What the three sides of bench/peers.mjs share: the timed loop of runs (warm-up first, then
// `runs` runs with `concurrency` in flight, this process's CPU around the timed part), and the
// child process each side is measured in, so one side's CPU and event loop never carry another's.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cpuSnapshot } from "./cpuTime.mjs";
import { openWalCounter } from "./walCounts.mjs";
import { warmupRuns } from "./warmup.mjs";

/**
 * `runOne(i)` is one whole run of the peer workload. Returns runs/s, the side's CPU (user + system
 * of this process and of the servers it started, `pids`) per timed run in ms, and with `walUrl` (the side's PostgreSQL) what PostgreSQL spent per
 * timed run: its processes' CPU, WAL bytes, heap row writes and commit records (bench/walCounts.mjs).
 * The machine CPU per run is the process's plus PostgreSQL's.
 */
export async function timeRuns({ concurrency, runs, runOne, walUrl, pids = [] }) {
  await lanes(warmupRuns(concurrency), concurrency, runOne);
  const wal = walUrl ? await openWalCounter(walUrl) : null;
  try {
    const from = await wal?.mark();
    const before = cpuSnapshot(pids);
    const cpu = process.cpuUsage();
    const started = performance.now();
    await lanes(runs, concurrency, (i) => runOne(warmupRuns(concurrency) + i));
    const elapsedMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const after = cpuSnapshot(pids);
    const writes = wal ? await wal.between(from, await wal.mark()) : null;
    // The side's own processes: this one, and the servers it started (`pids`).
    const servers =
      before && after ? after.awakenEach.reduce((sum, ms, i) => sum + ms - before.awakenEach[i], 0) : 0;
    const cpuMsPerRun = ((used.user + used.system) / 1000 + servers) / runs;
    const postgresMsPerRun = before && after ? (after.postgres - before.postgres) / runs : null;
    return {
      runsPerSec: runs / (elapsedMs / 1000),
      cpuMsPerRun,
      postgresCpuMsPerRun: postgresMsPerRun,
      machineCpuMsPerRun: postgresMsPerRun === null ? null : cpuMsPerRun + postgresMsPerRun,
      // The servers this side started (the HTTP side's `awaken up`), without this process (its client).
      serverCpuMsPerRun: pids.length > 0 ? servers / runs : null,
      walBytesPerRun: writes ? writes.walBytes / runs : null,
      rowWritesPerRun: writes?.rowWrites == null ? null : writes.rowWrites / runs,
      commitsPerRun: writes?.commits == null ? null : writes.commits / runs,
    };
  } finally {
    await wal?.close();
  }
}

async function lanes(count, concurrency, runOne) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await runOne(next++);
    }),
  );
}

/**
 * Runs `script` (a bench/peer*.mjs file) as a child with `--child` and the given options; the
 * child prints its figures as one JSON line last.
 */
export function inChild(scriptUrl, options) {
  const args = [fileURLToPath(scriptUrl), "--child"];
  for (const [key, value] of Object.entries(options)) args.push(`--${key}`, String(value));
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...(process.env.AWAKEN_BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []), ...args],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0) return reject(new Error(`${args[0]} exited with ${code}`));
      try {
        resolve(JSON.parse(last));
      } catch {
        reject(new Error(`${args[0]} printed no figures: ${last}`));
      }
    });
  });
}
