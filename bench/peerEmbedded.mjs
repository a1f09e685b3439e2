// The embedded runtime on the peer workload: `openAwaken({ databaseUrl })` in this process and the
// same turn a user's program runs through `awaken.beta` — user message → model (a custom tool
// call, from the offline model) → the tool, run by this client → model (the final text) → done,
// every step committed through the fence. A user's run needs its session, so by default each run
// creates its own session inside the clock (as a DBOS run starts its workflow); `sessions:
// "precreated"` creates them all before the clock starts (as bench/turns.mjs does), the variant
// that leaves that step out. The CPU per run is this whole process: platform, workers and client.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchArgs } from "./args.mjs";
import { inChild, timeRuns } from "./peerRuns.mjs";
import { freshSchema } from "./postgres.mjs";
import { withScope } from "./scope.mjs";
import { oneTurn } from "./turnDriver.mjs";
import { warmupRuns } from "./warmup.mjs";

/** A test value (base64 of 32 bytes), never a real key: the bench's database is thrown away. */
const BENCH_MASTER_KEY = Buffer.alloc(32, 0x5a).toString("base64");

/**
 * runs/s and this process's CPU ms per run of the embedded runtime on PostgreSQL; `sessions` is
 * `counted` (each run creates its session on the clock) or `precreated` (before the clock).
 */
export function measureEmbedded({ databaseUrl, concurrency, runs, sessions = "counted" }) {
  return withScope(async (scope) => {
    const { url } = await freshSchema(scope, databaseUrl, "awaken_bench_embedded");
    return inChild(import.meta.url, { url, concurrency, runs, sessions });
  });
}

async function child({ url, concurrency, runs, sessions: sessionMode }) {
  const { openAwaken } = await import("awaken-agents");
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-bench-embedded-"));
  const awaken = await openAwaken({
    databaseUrl: url,
    dataDir,
    workers: Math.max(4, concurrency),
    env: { PATH: process.env.PATH, AWAKEN_MASTER_KEY: BENCH_MASTER_KEY },
  });
  try {
    const beta = awaken.beta;
    const agent = await beta.agents.create({
      name: "peer",
      model: "offline-peer",
      tools: [
        {
          type: "custom",
          name: "lookup",
          description: "look up",
          input_schema: { type: "object", properties: { q: { type: "string" } } },
        },
      ],
    });
    const env = await beta.environments.create({ name: "peer" });
    const newSession = async () =>
      (await beta.sessions.create({ agent: agent.id, environment_id: env.id })).id;
    if (sessionMode === "counted")
      return await timeRuns({
        concurrency,
        runs,
        runOne: async () => oneTurn({ beta }, await newSession()),
        walUrl: url,
      });
    const total = warmupRuns(concurrency) + runs;
    const sessions = [];
    for (let i = 0; i < total; i++) sessions.push(await newSession());
    return await timeRuns({ concurrency, runs, runOne: (i) => oneTurn({ beta }, sessions[i]), walUrl: url });
  } finally {
    await awaken.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain && process.argv.includes("--child")) {
  const args = benchArgs(import.meta.url, {
    child: { type: "boolean" },
    url: { type: "string" },
    concurrency: { type: "string" },
    runs: { type: "string" },
    sessions: { type: "string" },
  });
  const figures = await child({
    url: args.url,
    concurrency: Number(args.concurrency),
    runs: Number(args.runs),
    sessions: args.sessions,
  });
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}
