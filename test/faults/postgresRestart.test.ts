/**
 * Fault under load: PostgreSQL itself restarts while turns run. Two replicas and two remote workers
 * share a schema on a private cluster (never the shared test server), thirty sessions each send one
 * message to a slowed offline model, and the cluster is restarted (fast shutdown cuts every pooled
 * and LISTEN connection) while runs are in flight. The SDK retries its own calls; a watcher whose
 * stream breaks re-reads the history with `events.list`. Every session must still reach end_turn,
 * and the history invariants must hold afterwards.
 */
import type Anthropic from "@anthropic-ai/sdk";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, startFaultCluster, until } from "../support/faultCluster.js";
import { checkHistoryInvariants } from "../support/historyInvariants.js";
import {
  createPrivateCluster,
  dropPrivateCluster,
  privateClusterUnavailable,
  restartPrivateCluster,
} from "../support/privatePostgres.js";
import { history, isEndTurnIdle, MODEL, sleep, userMessage, type WireEvent } from "../support/sdkHelpers.js";

const SESSIONS = 30;
const DEADLINE_MS = 40_000;

let cluster: FaultCluster | undefined;
let baseUrl: string | undefined;

beforeAll(async () => {
  if (!privateClusterUnavailable()) baseUrl = await createPrivateCluster();
}, 60_000);
afterAll(async () => {
  await dropPrivateCluster();
}, 60_000);
beforeEach(async (ctx) => {
  const reason = privateClusterUnavailable();
  if (reason) ctx.skip(reason);
  cluster = await startFaultCluster({ leaseMs: 1500, baseUrl: baseUrl! });
});
afterEach(async () => {
  await cluster?.dispose();
  cluster = undefined;
});

async function scalar(db: pg.Client, sql: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(sql);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Resolves once the session's history holds an end_turn idle: first from a live stream, and, if the
 * stream breaks or ends early, by re-reading `events.list` until the deadline. Notes how it saw it.
 */
async function watchUntilEndTurn(
  client: Anthropic,
  sessionId: string,
  deadline: number,
  onStreamBroken: () => void,
): Promise<void> {
  try {
    const stream = await client.beta.sessions.events.stream(sessionId);
    const timer = setTimeout(() => stream.controller.abort(), deadline - Date.now());
    try {
      for await (const event of stream) if (isEndTurnIdle(event as unknown as WireEvent)) return;
    } finally {
      clearTimeout(timer);
    }
  } catch {
    // the replica's stream broke (or never opened): fall back to the committed history
  }
  onStreamBroken();
  for (;;) {
    try {
      if ((await history(client, sessionId)).some(isEndTurnIdle)) return;
    } catch {
      // a read that failed past the SDK's own retries: try again until the deadline
    }
    if (Date.now() > deadline) throw new Error(`session ${sessionId} did not reach end_turn in time`);
    await sleep(200);
  }
}

describe("fault: PostgreSQL restarted under load", () => {
  it(`${SESSIONS} sessions all reach end_turn though the database restarts mid-turn`, async () => {
    const c = cluster!;
    const started = Date.now();
    const replicas = [await c.startReplica(), await c.startReplica()];
    // A per-word delay keeps runs in flight long enough for the restart to catch them.
    const workerEnv = { AWAKEN_OFFLINE_DELAY_MS: "20" };
    await c.startWorker(replicas[0]!.url, workerEnv, ["--concurrency", "8"]);
    await c.startWorker(replicas[1]!.url, workerEnv, ["--concurrency", "8"]);

    const client = replicas[0]!.client;
    const agent = await client.beta.agents.create({ name: "Restart", model: MODEL });
    const environment = await client.beta.environments.create({ name: "restart" });
    const sessionIds = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const via = replicas[i % 2]!.client;
        return (await via.beta.sessions.create({ agent: agent.id, environment_id: environment.id })).id;
      }),
    );

    const deadline = Date.now() + DEADLINE_MS;
    let brokenStreams = 0;
    const watchers = sessionIds.map((id, i) =>
      watchUntilEndTurn(replicas[i % 2]!.client, id, deadline, () => brokenStreams++),
    );
    // Watchers reject only at the deadline; keep them from surfacing as unhandled before the await.
    for (const w of watchers) w.catch(() => {});
    await Promise.all(
      sessionIds.map((id, i) =>
        replicas[(i + 1) % 2]!.client.beta.sessions.events.send(id, { events: [userMessage(`hello ${i}`)] }),
      ),
    );

    // Restart once runs are claimed and some answers are being written, so turns are mid-flight.
    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    let inFlight = 0;
    let finishedBefore = 0;
    try {
      inFlight = await until(
        "runs to be in flight",
        async () => {
          const n = await scalar(db, "select count(*) as n from runs where state = 'claimed'");
          return n >= 4 ? n : null;
        },
        15_000,
        10,
      );
      finishedBefore = await scalar(
        db,
        `select count(distinct session_id) as n from events
         where type = 'session.status_idle' and body_json like '%"end_turn"%'`,
      );
    } finally {
      await db.end();
    }
    const restartStarted = Date.now();
    await restartPrivateCluster();
    const restartMs = Date.now() - restartStarted;
    // The restart must have caught turns mid-way, or this test proves nothing.
    expect(finishedBefore).toBeLessThan(SESSIONS);

    await Promise.all(watchers);
    // Nothing crashed on the cut connections: every replica and worker is still up.
    for (const p of [...c.replicas, ...c.workers])
      expect(p.child.exitCode, p.stderr().slice(-2000)).toBeNull();

    const verify = new pg.Client({ connectionString: c.databaseUrl });
    await verify.connect();
    try {
      const { rows } = await verify.query<{ session_id: string; type: string; n: string }>(
        `select session_id, type, count(*) as n from events
         where type in ('user.message', 'session.status_idle') group by session_id, type`,
      );
      const counts = new Map<string, number>();
      for (const row of rows) counts.set(`${row.session_id}/${row.type}`, Number(row.n));
      for (const id of sessionIds) {
        expect(counts.get(`${id}/user.message`), id).toBe(1);
        expect(counts.get(`${id}/session.status_idle`), id).toBe(1);
      }
      expect(await scalar(verify, "select count(*) as n from runs where state <> 'done'")).toBe(0);
    } finally {
      await verify.end();
    }
    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
    expect(report.sessions).toBe(SESSIONS);
    expect(report.runs).toBe(SESSIONS);
    console.log(
      `postgresRestart: ${SESSIONS} sessions, ${inFlight} runs in flight and ${finishedBefore} done at restart (${restartMs} ms), ` +
        `${brokenStreams} streams re-read via events.list, ${report.events} events, ${Date.now() - started} ms`,
    );
  }, 60_000);
});
