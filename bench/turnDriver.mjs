// Drives turns through the official SDK over loopback HTTP, as a user's program would. One turn =
// user.message → agent.custom_tool_use → idle(requires_action) → user.custom_tool_result →
// idle(end_turn), on a fresh session, against the offline model (which answers in microseconds,
// so what is measured is the platform's overhead).
import Anthropic from "@anthropic-ai/sdk";
import { cpuBetween, cpuSnapshot } from "./cpuTime.mjs";
import { statementDifference } from "./statementCounts.mjs";
import { commitsOf, difference } from "./storeCounts.mjs";
import { API_KEY } from "./topologies.mjs";
import { warmupRuns } from "./warmup.mjs";

const TURN_TIMEOUT_MS = 60_000;
const PROGRESS_EVERY_MS = 5_000;
/** Parallelism of the untimed set-up and read-back requests (session creation, event lists). */
const SETUP_PARALLELISM = 8;

/**
 * Runs one concurrency level against a running topology: warm-up, then `turns` timed turns with
 * `concurrency` sessions in flight at once. Store counts, statement counts (PostgreSQL), Control link calls (split) and CPU times (by role, for the `awaken`
 * processes `pids`) are taken right before and right after the timed part, so warm-up and set-up
 * are excluded.
 */
export async function runLevel({
  url,
  pids,
  concurrency,
  turns,
  counts,
  statements,
  linkCalls,
  transportCalls,
  progress,
}) {
  const client = new Anthropic({ baseURL: url, apiKey: API_KEY, maxRetries: 0 });
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
  const newSessions = (n) =>
    pool(n, SETUP_PARALLELISM, async () => {
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
      return session.id;
    });

  // Sessions are created before the clock starts, so the timed part holds turns and nothing else
  // (session creation is its own write transaction, not part of a turn); before the warm-up, too,
  // so the timed part follows the warm-up's claims at once: after a pause longer than the workers'
  // poll interval, an idle slot's poll could land in the timed part's first milliseconds and be
  // counted as a turn's claim that found nothing.
  const warmup = warmupRuns(concurrency);
  progress(`creating ${warmup} + ${turns} sessions`);
  const warmupIds = await newSessions(warmup);
  const sessionIds = await newSessions(turns);

  // Warm-up at the level's concurrency: JIT, page caches, keep-alive connections, worker slots.
  progress(`warm-up: ${warmup} turns`);
  await runTurns(client, warmupIds, concurrency);
  progress(`timed: ${turns} turns, ${concurrency} at a time`);
  const before = await counts();
  const statementsBefore = statements ? await statements() : null;
  const linkCallsBefore = linkCalls ? await linkCalls() : null;
  const transportBefore = transportCalls ? await transportCalls() : null;
  const cpuBefore = cpuSnapshot(pids);
  const started = performance.now();
  const samples = await runTurns(client, sessionIds, concurrency, progress);
  const elapsedMs = performance.now() - started;
  const cpu = cpuBetween(cpuBefore, cpuSnapshot(pids));
  const sent = statementsBefore ? statementDifference(await statements(), statementsBefore) : null;
  const linked = linkCallsBefore === null ? null : (await linkCalls()) - linkCallsBefore;
  const transported = transportBefore === null ? null : callsBetween(transportBefore, await transportCalls());
  const writes = difference(await counts(), before);
  const server = await serverTurnTimes(client, sessionIds);
  return {
    samples,
    elapsedMs,
    writes,
    commits: commitsOf(writes),
    server,
    cpu,
    statements: sent,
    linkCalls: linked,
    transportCalls: transported,
  };
}

/** Calls per route between two readings, the routes that saw none left out. */
function callsBetween(before, after) {
  const calls = {};
  for (const [route, n] of Object.entries(after)) {
    const made = n - (before[route] ?? 0);
    if (made > 0) calls[route] = made;
  }
  return calls;
}

/** `concurrency` lanes take sessions off one list until it is empty. */
async function runTurns(client, sessionIds, concurrency, progress) {
  const samples = [];
  let next = 0;
  const ticker = progress
    ? setInterval(() => progress(`  … ${samples.length}/${sessionIds.length} turns`), PROGRESS_EVERY_MS)
    : null;
  try {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, sessionIds.length) }, async () => {
        while (next < sessionIds.length) {
          const sessionId = sessionIds[next++];
          samples.push(await oneTurn(client, sessionId));
        }
      }),
    );
  } finally {
    if (ticker) clearInterval(ticker);
  }
  return samples;
}

/** One timed custom-tool turn on the Managed wire (also the Managed line of protocolTurns.mjs). */
export async function oneTurn(client, sessionId) {
  // The stream is opened before the send, as the SDK's docs require, so no event is missed.
  const stream = await client.beta.sessions.events.stream(sessionId);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stream.controller.abort();
  }, TURN_TIMEOUT_MS);
  try {
    const events = stream[Symbol.asyncIterator]();
    const t0 = performance.now();
    await client.beta.sessions.events.send(sessionId, {
      events: [{ type: "user.message", content: [{ type: "text", text: 'call lookup {"q":"bench"}' }] }],
    });
    const awaiting = await waitIdle(events, "requires_action");
    const t1 = performance.now();
    await client.beta.sessions.events.send(sessionId, {
      events: [
        {
          type: "user.custom_tool_result",
          custom_tool_use_id: awaiting.stop_reason.event_ids[0],
          content: [{ type: "text", text: "42" }],
        },
      ],
    });
    await waitIdle(events, "end_turn");
    const t2 = performance.now();
    return { total: t2 - t0, toTool: t1 - t0 };
  } catch (error) {
    if (timedOut) throw new Error(`turn on ${sessionId} did not finish within ${TURN_TIMEOUT_MS} ms`);
    throw error;
  } finally {
    clearTimeout(timer);
    stream.controller.abort();
  }
}

async function waitIdle(events, reason) {
  for (;;) {
    const { value, done } = await events.next();
    if (done) throw new Error(`stream ended before session.status_idle(${reason})`);
    if (value.type === "session.status_idle" && value.stop_reason.type === reason) return value;
  }
}

/**
 * The platform's own time per turn, from the committed timestamps (`processed_at`, 1 ms
 * resolution): input committed → idle committed, for both halves of the turn. It excludes HTTP,
 * SSE delivery and the client, so comparing it with the client-observed latency shows where the
 * time goes.
 */
async function serverTurnTimes(client, sessionIds) {
  const perTurn = await pool(sessionIds.length, SETUP_PARALLELISM, async (i) => {
    const events = [];
    for await (const e of client.beta.sessions.events.list(sessionIds[i], { limit: 100 })) events.push(e);
    const at = (e) => Date.parse(e.processed_at);
    const message = events.find((e) => e.type === "user.message");
    const result = events.find((e) => e.type === "user.custom_tool_result");
    const idles = events.filter((e) => e.type === "session.status_idle");
    return at(idles[0]) - at(message) + (at(idles[1]) - at(result));
  });
  return perTurn.sort((a, b) => a - b);
}

/** Runs `task(i)` for i in [0, n) with at most `parallelism` at once; results in index order. */
async function pool(n, parallelism, task) {
  const results = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallelism, n) }, async () => {
      while (next < n) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}
