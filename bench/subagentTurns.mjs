#!/usr/bin/env node
// A turn that spawns two subagents in parallel beside two sequential single-agent turns, on one
// SQLite all-in-one server and the offline model, one workload at a time. The subagent turn is
// the parent's model call (two spawn_agent calls), two child threads (each its own claim, model
// call and fenced commit, answering the parent), and the parent's answer from their messages. The
// single-agent side is two plain message turns, one after the other, on one session. What the
// subagent turn adds beyond two turns' work is the price of threads: the spawns and the answers
// are commits on two histories, and the parent is claimed twice.
//
// Both sides run on an environment with sandbox tier "none" (the server started with
// --allow-unsandboxed-tier), so no sandbox start is on either clock: the figures are the
// platform's orchestration, not bubblewrap's. Each workload gets a fresh session per timed unit,
// made before the clock (session creation is the same on both sides) and deleted after it.
//
// Usage: node bench/subagentTurns.mjs [--turns N]   (default 100 per workload, after 20 warm-ups)
// Results go to stdout; progress goes to stderr.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { benchArgs } from "./args.mjs";
import { cpuBetween, cpuSnapshot } from "./cpuTime.mjs";
import { startAwaken } from "./processes.mjs";
import { withScope } from "./scope.mjs";

const API_KEY = "bench";
const WARMUP = 20;
/** Units per batch of sessions (below the per-workspace limit of sandbox workspaces on one worker). */
const BATCH = 50;
const PARALLEL =
  'In parallel: call spawn_agent {"agent_name":"researcher","message":"find A"} and call spawn_agent {"agent_name":"writer","message":"draft B"}';

const values = benchArgs(import.meta.url, { turns: { type: "string", default: "100" } });
const turns = Math.floor(Number(values.turns));
if (!(turns >= 1)) {
  console.error("bench: --turns must be a positive number");
  process.exit(2);
}
const log = (message) => process.stderr.write(`[subagent-turns] ${message}\n`);

await withScope(async (scope) => {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-bench-"));
  scope.defer(() => rmSync(dataDir, { recursive: true, force: true }));
  const { child, match } = await startAwaken(scope, {
    label: "awaken up",
    args: ["up", "--port", "0", "--data-dir", dataDir, "--workers", "4", "--allow-unsandboxed-tier"],
    env: { AWAKEN_API_KEY: API_KEY },
    ready: /listening on (http:\/\/\S+)/,
  });
  const client = new Anthropic({ baseURL: match[1], apiKey: API_KEY, maxRetries: 0 });
  const env = await client.beta.environments.create({
    name: "bench-unsandboxed",
    config: { type: "cloud", sandbox: { tier: "none", provisioning: "eager" } },
  });
  const researcher = await client.beta.agents.create({ name: "researcher", model: "offline-bench" });
  const writer = await client.beta.agents.create({ name: "writer", model: "offline-bench" });
  const lead = await client.beta.agents.create({
    name: "lead",
    model: "offline-bench",
    multiagent: {
      type: "multiagent_20261001",
      subagents: { type: "enabled", predefined_agents: [researcher.id, writer.id] },
    },
  });
  const single = await client.beta.agents.create({ name: "single", model: "offline-bench" });
  /**
   * `count` units on sessions made before the clock and deleted after it: an eager sandbox keeps a
   * workspace per session, and a workspace may hold only so many. CPU time is read in clock ticks
   * (10 ms), so over the batch, not per unit.
   */
  const batch = async (count, agent, unit) => {
    const sessions = [];
    for (let i = 0; i < count; i++)
      sessions.push((await client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id);
    const samples = [];
    const before = cpuSnapshot([child.pid]);
    for (const id of sessions) {
      const t0 = performance.now();
      await unit(id);
      samples.push(performance.now() - t0);
    }
    const cpuMs = cpuBetween(before, cpuSnapshot([child.pid]))?.awaken ?? Number.NaN;
    for (const id of sessions) await client.beta.sessions.delete(id);
    return { samples, cpuMs };
  };

  const workloads = [
    {
      label: "two sequential single-agent turns",
      agent: single,
      unit: async (id) => {
        await turn(client, id, "find A");
        await turn(client, id, "draft B");
      },
    },
    {
      label: "one turn spawning two subagents in parallel",
      agent: lead,
      unit: (id) => turn(client, id, PARALLEL, 2),
    },
  ];
  const rows = [];
  for (const { label, agent, unit } of workloads) {
    log(`${label}: ${WARMUP} warm-up + ${turns} timed`);
    await batch(WARMUP, agent, unit);
    const samples = [];
    let cpuMs = 0;
    for (let done = 0; done < turns; done += BATCH) {
      const timed = await batch(Math.min(BATCH, turns - done), agent, unit);
      samples.push(...timed.samples);
      cpuMs += timed.cpuMs;
    }
    rows.push({ label, ...stats(samples), cpuMs: cpuMs / turns });
  }

  console.log(
    `Awaken subagent turns, ${new Date().toISOString()}: Node ${process.version}, ${cpus().length} CPUs, ` +
      `load average ${loadavg()[0].toFixed(2)} at start; SQLite all-in-one with 4 workers, offline ` +
      `model, sandbox tier none, one unit at a time, ${turns} timed units per workload`,
  );
  const [base, spawned] = rows;
  console.log("");
  console.log(
    "| workload | p50 ms | p95 ms | mean ms | `awaken up` CPU ms per unit | p50 vs base | CPU vs base |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.label} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.mean.toFixed(1)} | ` +
        `${r.cpuMs.toFixed(2)} | ${(r.p50 / base.p50).toFixed(2)}× | ${(r.cpuMs / base.cpuMs).toFixed(2)}× |`,
    );
  }
  console.log("");
  console.log(
    `The subagent turn's two children run at once: its wall time is ${(spawned.p50 / base.p50).toFixed(2)}× ` +
      `the two sequential turns' at the median, for ${(spawned.cpuMs / base.cpuMs).toFixed(2)}× their server CPU.`,
  );
});

/**
 * One turn through the SDK: the stream opened before the send (as the SDK's docs require), then
 * read until the session's end_turn idle. `children` is how many child answers the parent must
 * have received first (a child's idle is a thread status, never the session's).
 */
async function turn(client, sessionId, text, children = 0) {
  const stream = await client.beta.sessions.events.stream(sessionId);
  try {
    await client.beta.sessions.events.send(sessionId, {
      events: [{ type: "user.message", content: [{ type: "text", text }] }],
    });
    let received = 0;
    for await (const event of stream) {
      if (event.type === "agent.thread_message_received") received += 1;
      if (event.type === "session.status_idle") {
        if (event.stop_reason?.type !== "end_turn")
          throw new Error(`turn stopped: ${event.stop_reason?.type}: ${await errorsOf(client, sessionId)}`);
        if (received < children) throw new Error(`turn ended with ${received} of ${children} child answers`);
        return;
      }
    }
    throw new Error("the stream ended before the turn did");
  } finally {
    stream.controller.abort();
  }
}

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p95: at(0.95), mean: samples.reduce((s, x) => s + x, 0) / samples.length };
}

/** The session's errors, for a turn that did not end as asked. */
async function errorsOf(client, sessionId) {
  const errors = [];
  for await (const e of client.beta.sessions.events.list(sessionId))
    if (e.type === "session.error") errors.push(e.error);
  return JSON.stringify(errors);
}
