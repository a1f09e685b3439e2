#!/usr/bin/env node
// Turn latency benchmark: N concurrent sessions, each doing one turn with one custom tool round
// trip against the offline model, through the official SDK over loopback HTTP.
// Usage: npm run bench -- [--concurrency 1,8,32] [--turns 200]
// Prints turns/s, p50/p99 from user.message to the final idle, and SQLite write transactions per turn.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import Anthropic from "@anthropic-ai/sdk";

const { values } = parseArgs({
  options: { concurrency: { type: "string", default: "1,8,32" }, turns: { type: "string", default: "200" } },
});
const levels = values.concurrency.split(",").map(Number);
const totalTurns = Number(values.turns);

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const fmt = (ms) => `${ms.toFixed(2)} ms`;

async function waitIdle(iterator, reason) {
  for (;;) {
    const { value, done } = await iterator.next();
    if (done) throw new Error("stream ended early");
    if (value.type === "session.status_idle" && value.stop_reason.type === reason) return value;
  }
}

async function oneTurn(client, agentId, envId) {
  const session = await client.beta.sessions.create({ agent: agentId, environment_id: envId });
  const stream = await client.beta.sessions.events.stream(session.id);
  const it = stream[Symbol.asyncIterator]();
  const t0 = performance.now();
  await client.beta.sessions.events.send(session.id, {
    events: [{ type: "user.message", content: [{ type: "text", text: 'call lookup {"q":"bench"}' }] }],
  });
  const awaiting = await waitIdle(it, "requires_action");
  const t1 = performance.now();
  await client.beta.sessions.events.send(session.id, {
    events: [
      {
        type: "user.custom_tool_result",
        custom_tool_use_id: awaiting.stop_reason.event_ids[0],
        content: [{ type: "text", text: "42" }],
      },
    ],
  });
  await waitIdle(it, "end_turn");
  const t2 = performance.now();
  stream.controller.abort();
  return { sessionId: session.id, total: t2 - t0, toTool: t1 - t0, afterTool: t2 - t1 };
}

async function level(concurrency) {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-bench-"));
  const server = await startServer(dataDir, Math.max(4, concurrency));
  const client = new Anthropic({ baseURL: server.url, apiKey: "bench", maxRetries: 0 });
  const agent = await client.beta.agents.create({
    name: "bench",
    model: "offline-bench",
    tools: [
      {
        type: "custom",
        name: "lookup",
        description: "look up",
        input_schema: { type: "object", properties: { q: { type: "string" } } },
      },
    ],
  });
  const env = await client.beta.environments.create({ name: "bench" });
  // Warm-up: JIT, SQLite page cache, HTTP keep-alive.
  for (let i = 0; i < Math.min(20, totalTurns); i++) await oneTurn(client, agent.id, env.id);

  const samples = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < totalTurns) {
        next++;
        samples.push(await oneTurn(client, agent.id, env.id));
      }
    }),
  );
  const elapsed = performance.now() - started;
  const counts = await countWrites(dataDir);
  const serverSide = await serverTurnTimes(
    client,
    samples.map((s) => s.sessionId),
  );
  server.child.kill("SIGTERM");
  await new Promise((resolve) => server.child.on("exit", resolve));
  rmSync(dataDir, { recursive: true, force: true });

  const totals = samples.map((s) => s.total).sort((a, b) => a - b);
  const half = samples.map((s) => s.toTool).sort((a, b) => a - b);
  const turns = counts.turns;
  console.log(
    `concurrency ${String(concurrency).padStart(3)}: ${samples.length} turns in ${(elapsed / 1000).toFixed(2)} s = ` +
      `${(samples.length / (elapsed / 1000)).toFixed(1)} turns/s | user.message→idle(end_turn) p50 ${fmt(percentile(totals, 50))} ` +
      `p99 ${fmt(percentile(totals, 99))} | message→requires_action p50 ${fmt(percentile(half, 50))} | ` +
      `writes/turn: ${(counts.fenced / turns).toFixed(2)} fenced commits + ${(counts.inputs / turns).toFixed(2)} input appends + ` +
      `${(counts.claims / turns).toFixed(2)} claims = ${((counts.fenced + counts.inputs + counts.claims) / turns).toFixed(2)}`,
  );
  // Timestamps have 1 ms resolution: the percentiles are whole milliseconds, the mean over many
  // turns is finer. Together the two halves are the platform's time per turn (the offline model
  // answers in microseconds, so this is overhead, not model time).
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const perTurn = serverSide.first.map((x, i) => x + serverSide.second[i]).sort((a, b) => a - b);
  console.log(
    `                 server-side platform time per turn (committed input → committed idle, both halves): ` +
      `p50 ${percentile(perTurn, 50)} ms, mean ${mean(perTurn).toFixed(2)} ms, p99 ${percentile(perTurn, 99)} ms ` +
      `(message→requires_action mean ${mean(serverSide.first).toFixed(2)} ms, result→end_turn mean ${mean(serverSide.second).toFixed(2)} ms)`,
  );
  return {
    turnsPerSecond: samples.length / (elapsed / 1000),
    p50: percentile(totals, 50),
    serverMean: mean(perTurn),
  };
}

/** The all-in-one server as its own process, as a user runs it, so client CPU is not counted. */
async function startServer(dataDir, workers) {
  const child = spawn(
    process.execPath,
    [
      new URL("../dist/cli/main.js", import.meta.url).pathname,
      "up",
      "--port",
      "0",
      "--data-dir",
      dataDir,
      "--workers",
      String(workers),
    ],
    {
      env: { PATH: process.env.PATH, AWAKEN_API_KEY: "bench", AWAKEN_LOG_LEVEL: "warn" },
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  let out = "";
  const url = await new Promise((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { child, url };
}

/** Platform time per half-turn as the server recorded it: committed input → committed idle. */
async function serverTurnTimes(client, sessionIds) {
  const first = [];
  const second = [];
  for (const id of sessionIds) {
    const events = [];
    for await (const e of client.beta.sessions.events.list(id, { limit: 100 })) events.push(e);
    const at = (e) => Date.parse(e.processed_at);
    const message = events.find((e) => e.type === "user.message");
    const idles = events.filter((e) => e.type === "session.status_idle");
    const result = events.find((e) => e.type === "user.custom_tool_result");
    first.push(at(idles[0]) - at(message));
    second.push(at(idles[1]) - at(result));
  }
  const sort = (xs) => xs.sort((a, b) => a - b);
  return { first: sort(first), second: sort(second) };
}

/** Counts durable write transactions from what they left behind in the database. */
async function countWrites(dataDir) {
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(join(dataDir, "awaken.db"), { readonly: true });
  const one = (sql) => Object.values(db.prepare(sql).get())[0];
  const result = {
    turns: one("select count(*) from runs"),
    fenced: one("select count(*) from commit_operations"),
    // Each session had two sends (message, tool result); each is one ledger transaction.
    inputs: one("select count(*) from events where type in ('user.message','user.custom_tool_result')"),
    // Every claim advances the run's epoch by one.
    claims: one("select coalesce(sum(epoch),0) from runs"),
  };
  db.close();
  return result;
}

console.log(
  `Awaken turn benchmark: offline model, one custom tool round trip per turn, ${totalTurns} turns per level`,
);
const results = [];
for (const c of levels) results.push({ c, ...(await level(c)) });
// Ratios measured in this one run: how throughput scales with concurrency, and what share of the
// client-observed turn the platform itself spends (the rest is HTTP, SSE delivery and the client).
const base = results[0];
for (const r of results) {
  console.log(
    `ratio concurrency ${r.c} vs ${base.c}: throughput ×${(r.turnsPerSecond / base.turnsPerSecond).toFixed(2)}, ` +
      `p50 latency ×${(r.p50 / base.p50).toFixed(2)}; platform share of the client-observed p50 turn ` +
      `${((100 * r.serverMean) / r.p50).toFixed(0)}%`,
  );
}
