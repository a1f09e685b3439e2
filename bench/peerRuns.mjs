// What the three sides of bench/peers.mjs share: the timed loop of runs (warm-up first, then
// `runs` runs with `concurrency` in flight, this process's CPU around the timed part), and the
// child process each side is measured in, so one side's CPU and event loop never carry another's.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { warmupRuns } from "./warmup.mjs";

/**
 * `runOne(i)` is one whole run of the peer workload. Returns runs/s and this process's CPU
 * (user + system) per timed run, in ms.
 */
export async function timeRuns({ concurrency, runs, runOne }) {
  await lanes(warmupRuns(concurrency), concurrency, runOne);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await lanes(runs, concurrency, (i) => runOne(warmupRuns(concurrency) + i));
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    runsPerSec: runs / (elapsedMs / 1000),
    cpuMsPerRun: (used.user + used.system) / 1000 / runs,
  };
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
