/**
 * Round trips a remote worker makes per turn, counted by path on the way to the coordinator (a TCP
 * proxy records every request). One turn is the bench's: user.message → agent.custom_tool_use →
 * idle(requires_action) → user.custom_tool_result → idle(end_turn), two model calls, two runs.
 *
 * Before: every waiting long-poll claim woke on each dispatch (4 slots: 4 claims back, 3 empty,
 * each claiming again), and every model call sent its previews in separate evidence requests that
 * each commit waited for. Now one waiting claim wakes per dispatch, and the previews still pending
 * when a commit leaves travel inside it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { systemClock } from "../../src/kernel/clock.js";
import { createProviderRouter } from "../../src/providers/router.js";
import { DEFAULT_RETRY_POLICY } from "../../src/runtime/retryPolicy.js";
import { createSandboxes } from "../../src/sandbox/sandboxes.js";
import { HttpWorkerTransport } from "../../src/worker/httpTransport.js";
import { Worker } from "../../src/worker/workerLoop.js";
import {
  createSession,
  isActionIdle,
  isEndTurnIdle,
  StreamReader,
  textOf,
  userMessage,
  WEATHER_TOOL,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.js";

const KEY = "sk-awaken-round-trips-test";
const TOKEN = "worker-token-round-trips-0123";
const silent = { info: () => {}, warn: () => {} };
const PREFIX = "/v1/awaken/worker";

let dataDir: string;
let server: RunningServer;
let proxy: TcpProxy;
let worker: Worker;
let sandboxes: ReturnType<typeof createSandboxes>;
let client: Anthropic;

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "awaken-round-trips-"));
  server = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 0,
      leaseMs: 15_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: KEY,
      workerToken: TOKEN,
      retry: {},
      env: {},
    },
    pino({ level: "silent" }),
  );
  client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
  proxy = await startTcpProxy(server.url);
  sandboxes = createSandboxes(join(dataDir, "worker-workspaces"));
  // The remote worker's loop and transport, in this process: 4 slots (the default concurrency).
  worker = new Worker(
    new HttpWorkerTransport({ baseUrl: proxy.url, token: TOKEN, log: silent, claimWaitMs: 2_000 }),
    {
      providers: createProviderRouter({}),
      sandboxes,
      clock: systemClock,
      retry: { ...DEFAULT_RETRY_POLICY, baseDelayMs: 10 },
      crashBudget: 5,
      modelIdleTimeoutMs: 300_000,
      log: silent,
    },
    { id: "counted", concurrency: 4, leaseMs: 15_000, pollMs: 50, drainMs: 3_000 },
  );
  worker.start();
});
afterEach(async () => {
  await worker.stop();
  await sandboxes.close();
  await proxy.close();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** One bench turn: a message, a custom tool call answered by the client, the final answer. */
async function toolTurn(sessionId: string, n: number): Promise<WireEvent[]> {
  const endTurns = (h: WireEvent[]) => h.filter(isEndTurnIdle).length;
  const before = endTurns(await waitForHistory(client, sessionId, () => true));
  await client.beta.sessions.events.send(sessionId, { events: [userMessage(`call get_weather ${n}`)] });
  let events = await waitForHistory(
    client,
    sessionId,
    (h) => h.filter(isActionIdle).length > n && h.at(-1)?.type === "session.status_idle",
  );
  const toolUse = events.filter((e) => e.type === "agent.custom_tool_use").at(-1);
  await client.beta.sessions.events.send(sessionId, {
    events: [
      {
        type: "user.custom_tool_result",
        custom_tool_use_id: toolUse!.id,
        content: [{ type: "text", text: "sunny" }],
      },
    ],
  });
  events = await waitForHistory(client, sessionId, (h) => endTurns(h) > before);
  return events;
}

function countByPath(requests: TcpProxy["requests"]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of requests) {
    const name = r.path.startsWith(PREFIX) ? r.path.slice(PREFIX.length + 1) : r.path;
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

describe("a remote worker's round trips per turn", () => {
  it("one claim per dispatch wakes, and previews ride along with the commit that ends them", async () => {
    const { session } = await createSession(client, { tools: [WEATHER_TOOL] });
    await toolTurn(session.id, 0); // warm-up: keep-alive connections, JIT

    const TURNS = 5;
    const from = proxy.requests.length;
    const started = Date.now();
    for (let n = 1; n <= TURNS; n++) await toolTurn(session.id, n);
    const elapsedMs = Date.now() - started;
    const counts = countByPath(proxy.requests.slice(from));
    const perTurn = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / TURNS]));
    console.log(`remote worker requests per turn (4 slots, ${TURNS} turns): ${JSON.stringify(perTurn)}`);

    // Two runs per turn (the message, then the tool result): the waiting claim that gets each, and
    // the slot's next long-poll once the run settled. The 4 idle slots' long-polls end every 2 s
    // and start again: that much comes on top whatever the turns do.
    const timeouts = 4 * Math.ceil(elapsedMs / 2_000);
    expect(counts.claim ?? 0).toBeLessThanOrEqual(TURNS * 2 + timeouts + 2);
    // Two model calls per turn, one commit each: a request's span start is committed with its
    // answer (and the idle that settles the run), not in a commit of its own before the request.
    expect(counts.commit).toBe(TURNS * 2);
    // The offline model answers at once: its previews leave with the landing commit.
    expect(counts.evidence ?? 0).toBeLessThanOrEqual(TURNS);
  }, 60_000);

  it("a stream that asked for deltas still gets the previews before the message they end", async () => {
    const { session } = await createSession(client);
    const reader = await StreamReader.open(client, session.id, { event_deltas: ["agent.message"] });
    try {
      await client.beta.sessions.events.send(session.id, { events: [userMessage("preview me please")] });
      await reader.until(isEndTurnIdle);
    } finally {
      await reader.close();
    }
    const start = reader.events.find((e) => e.type === "event_start");
    const deltas = reader.events.filter((e) => e.type === "event_delta");
    const message = reader.events.find((e) => e.type === "agent.message");
    expect(start).toBeDefined();
    expect((start!.event as { id: string }).id).toBe(message?.id);
    expect(deltas.length).toBeGreaterThan(1);
    const at = (e: WireEvent | undefined) => reader.events.indexOf(e as WireEvent);
    expect(at(start)).toBeLessThan(at(deltas[0]));
    expect(at(deltas.at(-1))).toBeLessThan(at(message));
    const joined = deltas.map((d) => (d.delta as { content: { text: string } }).content.text).join("");
    expect(joined).toBe(textOf(message));
  }, 30_000);
});
