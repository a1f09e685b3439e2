#!/usr/bin/env node
// The HTTP edge's floor for one benchmark turn: a bare Fastify server (the product's own HTTP
// server library, no database, no runtime, no validation) answering the same requests the official
// SDK makes in one custom-tool turn (bench/turnDriver.mjs `oneTurn`: open the event stream, send
// user.message, send user.custom_tool_result) with the same SSE frames in the same bursts a real
// server commits them in (6 bursts, 14 events). Its CPU per turn is what any Node server pays only
// to speak this wire to this client; the platform's CPU per turn can only be above it. Printed
// beside the PostgreSQL statements' own floor (the raw five-insert client's CPU, scaled to the
// statements a turn sends), it bounds from below what a platform CPU goal can ask.
//
// Usage: node bench/edgeFloor.mjs [--concurrency 8] [--turns 2000] [--repeat 2] [--statements 10]
//   --statements   PostgreSQL statements per turn to price at the raw client's cost (default 10,
//                  about what bench/turns.mjs counts per pg turn); 0 skips the database side
//   PostgreSQL     AWAKEN_BENCH_DATABASE_URL, else AWAKEN_TEST_DATABASE_URL, else
//                  postgres://postgres@127.0.0.1:5432/test (only for the statements' floor)
import Anthropic from "@anthropic-ai/sdk";
import { benchArgs } from "./args.mjs";
import { timeRuns } from "./peerRuns.mjs";
import { benchDatabaseUrl } from "./postgres.mjs";
import { oneTurn } from "./turnDriver.mjs";
import { warmupRuns } from "./warmup.mjs";

const FLOOR_STEPS = 5;

/** A stored event as the Managed wire shows it, about the size of the real one. */
function event(type, extra) {
  const id = `sevt_${Math.random().toString(36).slice(2).padEnd(24, "0")}`;
  return { id, type, ...extra, processed_at: new Date().toISOString() };
}
const usage = () =>
  event("session.usage", {
    usage: { input_tokens: 12, output_tokens: 9, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    cumulative: { input_tokens: 24, output_tokens: 18 },
  });
const spanEnd = () =>
  event("span.model_request_end", {
    model_request_start_id: "sevt_start",
    is_error: false,
    model_usage: {
      input_tokens: 12,
      output_tokens: 9,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    },
  });

/** The bursts a real turn's commits make after each send, as the stream shows them. */
function burstsAfter(sent) {
  const running = event("session.status_running", {});
  const start = event("span.model_request_start", { provider: "offline", model: "offline-bench" });
  if (sent.type === "user.message") {
    const call = event("agent.custom_tool_use", { name: "lookup", input: { q: "bench" } });
    return [
      [event("user.message", { content: sent.content }), running],
      [start],
      [
        call,
        spanEnd(),
        usage(),
        event("session.status_idle", { stop_reason: { type: "requires_action", event_ids: [call.id] } }),
      ],
    ];
  }
  return [
    [
      event("user.custom_tool_result", {
        custom_tool_use_id: sent.custom_tool_use_id,
        content: sent.content,
      }),
      running,
    ],
    [start],
    [
      event("agent.message", {
        content: [{ type: "text", text: "[offline model] Tool result received: 42" }],
      }),
      spanEnd(),
      usage(),
      event("session.status_idle", { stop_reason: { type: "end_turn" } }),
    ],
  ];
}

/** The bare server, in a process of its own so its CPU is its own; `/cpu` reads it. */
async function serverChild({ port }) {
  const { default: Fastify } = await import("fastify");
  const app = Fastify({ logger: false });
  const streams = new Map();
  app.get("/v1/sessions/:id/events/stream", (request, reply) => {
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
    raw.flushHeaders();
    streams.set(request.params.id, raw);
    raw.on("close", () => streams.delete(request.params.id));
  });
  app.post("/v1/sessions/:id/events", async (request) => {
    const bursts = burstsAfter(request.body.events[0]);
    const raw = streams.get(request.params.id);
    // Each burst leaves in an event-loop turn of its own, as separate commits do.
    const next = (i) => {
      if (i >= bursts.length) return;
      for (const e of bursts[i]) raw?.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      setImmediate(next, i + 1);
    };
    setImmediate(next, 0);
    return { data: [bursts[0][0]] };
  });
  app.get("/cpu", async () => process.cpuUsage());
  const url = await app.listen({ port: Number(port), host: "127.0.0.1" });
  process.stdout.write(`${url}\n`);
}

const isMain = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isMain && process.argv.includes("--server")) {
  await serverChild(benchArgs(import.meta.url, { server: { type: "boolean" }, port: { type: "string" } }));
} else if (isMain) {
  const args = benchArgs(import.meta.url, {
    concurrency: { type: "string", default: "8" },
    turns: { type: "string", default: "2000" },
    repeat: { type: "string", default: "2" },
    statements: { type: "string", default: "10" },
  });
  await main({
    concurrency: Number(args.concurrency),
    turns: Number(args.turns),
    repeat: Number(args.repeat),
    statements: Number(args.statements),
  });
}

async function main({ concurrency, turns, repeat, statements }) {
  const { spawn } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const log = (line) => process.stderr.write(`${line}\n`);
  const edge = [];
  const db = [];
  for (let r = 0; r < repeat; r++) {
    const server = spawn(process.execPath, [fileURLToPath(import.meta.url), "--server", "--port", "0"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const url = await new Promise((resolve, reject) => {
        let out = "";
        server.stdout.on("data", (chunk) => {
          out += chunk;
          if (out.includes("\n")) resolve(out.trim());
        });
        server.on("exit", (code) => reject(new Error(`edge floor server exited with ${code}`)));
      });
      const cpu = async () => {
        const used = await (await fetch(`${url}/cpu`)).json();
        return (used.user + used.system) / 1000;
      };
      const client = new Anthropic({ baseURL: url, apiKey: "bench", maxRetries: 0 });
      let before = 0;
      const { runsPerSec } = await timeRuns({
        concurrency,
        runs: turns,
        runOne: async (i) => {
          // The warm-up's last turn starts the server's CPU window (timeRuns times the rest).
          if (i === warmupRuns(concurrency)) before = await cpu();
          return oneTurn(client, `sesn_${i}`);
        },
      });
      const serverMs = ((await cpu()) - before) / turns;
      edge.push(serverMs);
      log(
        `repeat ${r + 1}/${repeat}: bare edge ${runsPerSec.toFixed(0)} turns/s, server CPU ${serverMs.toFixed(2)} ms/turn`,
      );
    } finally {
      server.kill();
    }
    if (statements > 0) {
      // Imported here: the server child must not carry the bench scope's signal handlers.
      const { measureFloor } = await import("./peerFloor.mjs");
      const floor = await measureFloor({ databaseUrl: benchDatabaseUrl(), concurrency, runs: turns });
      const perStatement = floor.cpuMsPerRun / FLOOR_STEPS;
      db.push(perStatement * statements);
      log(`repeat ${r + 1}/${repeat}: raw client ${perStatement.toFixed(3)} ms per statement`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const range = (xs) =>
    `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)} over ${xs.length})`;
  console.log(`Edge floor at c=${concurrency}, ${turns} turns per repeat:`);
  console.log(`  bare HTTP+SSE server CPU per turn (3 requests, 14 events in 6 bursts): ${range(edge)} ms`);
  if (db.length > 0) {
    console.log(`  ${statements} PostgreSQL statements at the raw client's cost: ${range(db)} ms`);
    const sum = edge.map((e, i) => e + db[i]);
    console.log(`  floor of a platform turn (both, nothing else): ${range(sum)} ms`);
  }
}
