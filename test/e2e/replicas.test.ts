import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import {
  createSession,
  isEndTurnIdle,
  StreamReader,
  userMessage,
  type WireEvent,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// Two replicas on one database: A runs the workers, B only serves (`workers: 0`). Polling is
// raised far above every bound asserted here, so a pass proves the LISTEN/NOTIFY path, not polling.
const POLL_MS = 10_000;
const PROMPT_MS = 800;

let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
const servers: TestServer[] = [];
const readers: StreamReader[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
});
afterEach(async () => {
  delete process.env.AWAKEN_OFFLINE_DELAY_MS;
  for (const r of readers.splice(0)) await r.close();
  for (const s of servers.splice(0)) await s.close();
  await schema?.drop();
  schema = undefined;
});

async function replicas(options: { leaseMs?: number; workersOnA?: number } = {}) {
  const common = {
    databaseUrl: schema!.url,
    streamPollMs: POLL_MS,
    workerPollMs: POLL_MS,
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  };
  const a = await startTestServer({ ...common, workers: options.workersOnA ?? 2 });
  servers.push(a);
  const b = await startTestServer({ ...common, workers: 0 });
  servers.push(b);
  return { a, b };
}

async function open(
  server: TestServer,
  sessionId: string,
  params: { event_deltas?: Array<"agent.message"> } = {},
): Promise<StreamReader> {
  const reader = await StreamReader.open(server.client, sessionId, params);
  readers.push(reader);
  return reader;
}

async function send(
  server: TestServer,
  sessionId: string,
  event: Parameters<typeof userMessage>[0] | "interrupt",
) {
  const events = event === "interrupt" ? [{ type: "user.interrupt" as const }] : [userMessage(event)];
  const sent = await server.client.beta.sessions.events.send(sessionId, { events });
  return sent.data?.[0] as unknown as WireEvent;
}

describe("replicas sharing one PostgreSQL database", () => {
  it("a stream on B sees a turn sent through A, through idle, well within the polling interval", async () => {
    const { a, b } = await replicas();
    const { session } = await createSession(a.client);
    const reader = await open(b, session.id);

    const started = Date.now();
    const echo = await send(a, session.id, "hello from A");
    const idle = await reader.until(isEndTurnIdle, { timeoutMs: 5_000 });
    const elapsed = Date.now() - started;

    const turn = reader.events.slice(reader.events.findIndex((e) => e.id === echo.id));
    expect(turn.map((e) => e.type)).toEqual([
      "user.message",
      "session.status_running",
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    expect(turn.at(-1)?.id).toBe(idle.id);
    expect(elapsed).toBeLessThan(PROMPT_MS);
  });

  it("a turn dispatched on B, which has no workers, is executed promptly by A's worker", async () => {
    const { a, b } = await replicas();
    const { session } = await createSession(b.client);
    const onB = await open(b, session.id);
    const onA = await open(a, session.id);

    const started = Date.now();
    await send(b, session.id, "hello from B");
    await onA.until(isEndTurnIdle, { timeoutMs: 5_000 });
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
    const idleOnB = await onB.until(isEndTurnIdle, { timeoutMs: 5_000 });
    expect(Date.now() - started).toBeLessThan(PROMPT_MS);
    expect(idleOnB.id).toBe(onA.events.find(isEndTurnIdle)?.id);
  });

  it("user.interrupt sent through B aborts the model call of the worker on A at once", async () => {
    // One slot on A and renewals every 10 s: only the cancel signal can free that slot quickly.
    const { a, b } = await replicas({ leaseMs: 30_000, workersOnA: 1 });
    const { session } = await createSession(a.client);
    const reader = await open(b, session.id);
    // Previews stay in the replica whose worker streams them: A's stream shows the call in flight
    // (nothing of a model request is committed before its answer).
    const onA = await open(a, session.id, { event_deltas: ["agent.message"] });

    process.env.AWAKEN_OFFLINE_DELAY_MS = "100";
    const long = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" "); // ≈ 6 s to answer
    await send(a, session.id, long);
    await onA.until((e) => e.type === "event_delta", { timeoutMs: 5_000 });
    delete process.env.AWAKEN_OFFLINE_DELAY_MS;

    const started = Date.now();
    const from = reader.events.length;
    await send(b, session.id, "interrupt");
    const idle = await reader.until((e) => e.type === "session.status_idle", { from, timeoutMs: 5_000 });
    expect(idle).toMatchObject({ stop_reason: { type: "end_turn" } });

    // The next turn needs A's only slot: it runs now only if the long model call was aborted.
    const next = reader.events.length;
    await send(b, session.id, "after the interrupt");
    const reply = await reader.until((e) => e.type === "agent.message", { from: next, timeoutMs: 5_000 });
    await reader.until(isEndTurnIdle, { from: next, timeoutMs: 5_000 });
    expect(Date.now() - started).toBeLessThan(2 * PROMPT_MS);
    expect(JSON.stringify(reply.content)).toContain("after the interrupt");
    // The cut-off answer was never committed: the only agent.message is the next turn's, and the
    // only model request in history is the one that answered it.
    expect(reader.events.filter((e) => e.type === "agent.message").map((e) => e.id)).toEqual([reply.id]);
    expect(reader.events.filter((e) => e.type === "span.model_request_start")).toHaveLength(1);
  });
});
