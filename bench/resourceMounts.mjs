// Resource mounts: what a mounted file and a mounted memory store add to a session's first tool
// call. An all-in-one server (SQLite, the bwrap tier, the offline model) runs the same first turn
// — the model calls `bash` once, then answers — in sessions with no resource, with one uploaded
// file, and with one read-write memory store; the clock runs from the send to the tool's result on
// the session's stream, so it holds the run's claim, the realization of its resources (resolve,
// blob reads, materialization, binds) and the sandbox's start. Session creation (validation and
// the resource rows) is timed apart, and shown beside it; so is the next turn's tool call on the
// same session (a new run: its resources realized again, its sandbox already up), which is what a
// mounted store costs every turn. Run `npm run build` first (uses dist/).
//
//   node bench/resourceMounts.mjs [--sessions N] [--file-kb N] [--memories N]

import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import Anthropic, { toFile } from "@anthropic-ai/sdk";
import { benchArgs } from "./args.mjs";
import { startAwaken } from "./processes.mjs";
import { withScope } from "./scope.mjs";

const values = benchArgs(import.meta.url, {
  sessions: { type: "string", default: "12" },
  "file-kb": { type: "string", default: "256" },
  memories: { type: "string", default: "20" },
});
const SESSIONS = Number(values.sessions);
const FILE_BYTES = Number(values["file-kb"]) * 1024;
const MEMORIES = Number(values.memories);
const API_KEY = "bench";
const TURN = 'Run the tool `bash` {"command": "true"}';

const median = (xs) => quantile(xs, 0.5);
function quantile(xs, q) {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}
const ms = (x) => x.toFixed(1);

/**
 * Sends the turn and waits for its `agent.tool_result` on a stream opened before the send, then for
 * the turn's end (untimed), so the next turn starts a new run.
 */
async function toolTurn(client, sessionId) {
  const stream = await client.beta.sessions.events.stream(sessionId);
  const iterator = stream[Symbol.asyncIterator]();
  const started = performance.now();
  let elapsed;
  await client.beta.sessions.events.send(sessionId, {
    events: [{ type: "user.message", content: [{ type: "text", text: TURN }] }],
  });
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) throw new Error(`session ${sessionId}: the stream ended before a tool result`);
      const event = next.value;
      if (event.type === "agent.tool_result") {
        if (event.is_error)
          throw new Error(`session ${sessionId}: the tool failed: ${JSON.stringify(event)}`);
        elapsed ??= performance.now() - started;
      }
      if (elapsed !== undefined && event.type === "session.status_idle") return elapsed;
      if (event.type === "session.error") throw new Error(`session ${sessionId}: ${JSON.stringify(event)}`);
    }
  } finally {
    stream.controller.abort();
  }
}

await withScope(async (scope) => {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-bench-resources-"));
  scope.defer(() => rmSync(dataDir, { recursive: true, force: true }));
  const { match } = await startAwaken(scope, {
    label: "awaken up",
    args: ["up", "--port", "0", "--data-dir", dataDir, "--workers", "4"],
    env: { AWAKEN_API_KEY: API_KEY },
    ready: /listening on (http:\/\/\S+)/,
  });
  const client = new Anthropic({ baseURL: match[1], apiKey: API_KEY, maxRetries: 0 });
  const environment = await client.beta.environments.create({
    name: "bench",
    // Mounted resources need the sandbox before the first tool call: every variant provisions eagerly.
    config: {
      type: "cloud",
      networking: { type: "limited", allowed_hosts: [] },
      sandbox: { provisioning: "eager" },
    },
  });
  const agent = await client.beta.agents.create({
    name: "bench",
    model: "offline-bench",
    tools: [{ type: "agent_toolset_20260401" }],
  });
  const bytes = Buffer.alloc(FILE_BYTES, "awaken bench file\n");
  const file = await client.beta.files.upload({
    file: await toFile(bytes, "bench.txt", { type: "text/plain" }),
  });
  const store = await client.beta.memoryStores.create({ name: "bench notes" });
  for (let i = 0; i < MEMORIES; i += 1) {
    await client.beta.memoryStores.memories.create(store.id, {
      path: `/notes/n${i}.md`,
      content: `note ${i}\n`,
    });
  }

  const variants = [
    { name: "no resource", resources: [] },
    { name: `1 file (${values["file-kb"]} KiB)`, resources: [{ type: "file", file_id: file.id }] },
    {
      name: `1 memory store (${MEMORIES} memories, read-write)`,
      resources: [{ type: "memory_store", memory_store_id: store.id, access: "read_write" }],
    },
  ];
  const rows = [];
  // Warm-up: the first session pays the server's and bwrap's one-time costs for every variant.
  for (const variant of variants) {
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: environment.id,
      resources: variant.resources,
    });
    await toolTurn(client, session.id);
  }
  for (const variant of variants) {
    const created = [];
    const tool = [];
    const next = [];
    for (let i = 0; i < SESSIONS; i += 1) {
      const t0 = performance.now();
      const session = await client.beta.sessions.create({
        agent: agent.id,
        environment_id: environment.id,
        resources: variant.resources,
      });
      created.push(performance.now() - t0);
      tool.push(await toolTurn(client, session.id));
      next.push(await toolTurn(client, session.id));
      process.stderr.write(".");
    }
    rows.push({ name: variant.name, created, tool, next });
  }
  process.stderr.write("\n");

  const base = median(rows[0].tool);
  const baseTotal = median(rows[0].tool.map((t, i) => t + rows[0].created[i]));
  console.log(
    `resource mounts · ${SESSIONS} sessions per variant · ${cpus().length} cores · load ${loadavg()[0].toFixed(2)}`,
  );
  console.log(
    "| variant | create (median ms) | send → first tool result (median · p90 ms) | added to the first tool | create + first tool (median ms) | ratio to no resource | next turn's tool (median ms) | added to it |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  const baseNext = median(rows[0].next);
  for (const row of rows) {
    const toolMedian = median(row.tool);
    const total = median(row.tool.map((t, i) => t + row.created[i]));
    console.log(
      `| ${row.name} | ${ms(median(row.created))} | ${ms(toolMedian)} · ${ms(quantile(row.tool, 0.9))} | +${ms(toolMedian - base)} | ${ms(total)} | ${(total / baseTotal).toFixed(2)} | ${ms(median(row.next))} | +${ms(median(row.next) - baseNext)} |`,
    );
  }
});
