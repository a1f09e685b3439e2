/**
 * Fault under load: many concurrent sessions (one user.message each, offline model) over two
 * replicas and three remote workers, with one worker SIGKILLed while it holds runs. Every session
 * must reach end_turn (the killed worker's runs resume elsewhere once their leases lapse) and the
 * history invariants must hold across the whole schema.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { until, useFaultCluster } from "../support/faultCluster.js";
import { checkHistoryInvariants } from "../support/historyInvariants.js";
import { MODEL, userMessage } from "../support/sdkHelpers.js";

const SESSIONS = 200;
const CLIENT_CONCURRENCY = 16;

const faultCluster = useFaultCluster({ leaseMs: 1500 });

/** Runs `task` for 0..count-1 with at most `limit` in flight. */
async function pool(count: number, limit: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: limit }, lane));
}

async function scalar(db: pg.Client, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: string }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

async function heldBy(db: pg.Client, workerId: string): Promise<Array<{ id: string; epoch: number }>> {
  const { rows } = await db.query<{ id: string; epoch: string }>(
    "select id, epoch from runs where state = 'claimed' and owner like $1 order by id",
    [`${workerId}.%`],
  );
  return rows.map((r) => ({ id: r.id, epoch: Number(r.epoch) }));
}

const FINISHED_SQL = `select count(distinct session_id) as n from events
  where type = 'session.status_idle' and body_json like '%"end_turn"%'`;

describe("fault: many sessions, two replicas, three workers, one killed", () => {
  it(`${SESSIONS} concurrent sessions all reach end_turn though a worker is SIGKILLed midway`, async () => {
    const c = faultCluster();
    const started = Date.now();
    const replicas = [await c.startReplica(), await c.startReplica()];
    // A short per-word delay keeps runs in flight long enough for the kill to catch some.
    const workerEnv = { AWAKEN_OFFLINE_DELAY_MS: "5" };
    await c.startWorker(replicas[0]!.url, workerEnv, ["--concurrency", "6"]);
    await c.startWorker(replicas[1]!.url, workerEnv, ["--concurrency", "6"]);
    const doomed = await c.startWorker(replicas[0]!.url, workerEnv, ["--concurrency", "6", "--id", "doomed"]);

    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    try {
      const client = replicas[0]!.client;
      const agent = await client.beta.agents.create({ name: "Load", model: MODEL });
      const environment = await client.beta.environments.create({ name: "load" });
      const sessionIds: string[] = new Array(SESSIONS);
      await pool(SESSIONS, CLIENT_CONCURRENCY, async (i) => {
        const via = replicas[i % 2]!.client;
        const session = await via.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
        sessionIds[i] = session.id;
      });

      // All sends go out concurrently, alternating replicas; the kill happens while they run.
      const sending = pool(SESSIONS, CLIENT_CONCURRENCY, async (i) => {
        await replicas[(i + 1) % 2]!.client.beta.sessions.events.send(sessionIds[i]!, {
          events: [userMessage(`hello number ${i}`)],
        });
      });
      // Freeze the doomed worker while it holds runs, let its requests already on the wire land,
      // note what it still holds, then kill it: those runs can only finish through a takeover.
      const held = await until(
        "the doomed worker to hold runs after a quarter of the sessions finished",
        async () => {
          const finished = await scalar(db, FINISHED_SQL);
          if (finished < SESSIONS / 4) return null;
          if ((await heldBy(db, "doomed")).length === 0) return null;
          doomed.child.kill("SIGSTOP");
          // Requests it sent before the freeze may still land: read until two reads 250 ms apart
          // agree, so what it holds is what it will hold.
          let frozen = await heldBy(db, "doomed");
          for (let settled = false; !settled; ) {
            await new Promise((resolve) => setTimeout(resolve, 250));
            const again = await heldBy(db, "doomed");
            settled = JSON.stringify(again) === JSON.stringify(frozen);
            frozen = again;
          }
          if (frozen.length === 0) doomed.child.kill("SIGCONT");
          return frozen.length > 0 ? frozen : null;
        },
        30_000,
        10,
      );
      doomed.child.kill("SIGKILL");
      await doomed.exited;
      await sending;

      await until(
        "every session to reach end_turn",
        async () => (await scalar(db, FINISHED_SQL)) === SESSIONS,
        40_000,
        100,
      );

      // Per session: one question, one answer, one end_turn; every run done.
      const { rows } = await db.query<{ session_id: string; type: string; n: string }>(
        `select session_id, type, count(*) as n from events
         where type in ('user.message', 'agent.message', 'session.status_idle') group by session_id, type`,
      );
      const counts = new Map<string, number>();
      for (const row of rows) counts.set(`${row.session_id}/${row.type}`, Number(row.n));
      for (const id of sessionIds) {
        expect(counts.get(`${id}/user.message`), id).toBe(1);
        expect(counts.get(`${id}/agent.message`), id).toBe(1);
        expect(counts.get(`${id}/session.status_idle`), id).toBe(1);
      }
      expect(await scalar(db, "select count(*) as n from runs where state <> 'done'")).toBe(0);
      // The killed worker's runs were taken over: a later epoch settled each of them.
      const { rows: after } = await db.query<{ id: string; epoch: string; state: string }>(
        "select id, epoch, state from runs where id = any($1::text[])",
        [held.map((r) => r.id)],
      );
      expect(after).toHaveLength(held.length);
      for (const run of after) {
        expect(run.state).toBe("done");
        expect(Number(run.epoch)).toBeGreaterThan(held.find((r) => r.id === run.id)!.epoch);
      }

      const report = await checkHistoryInvariants(c.databaseUrl);
      expect(report.violations).toEqual([]);
      expect(report.sessions).toBe(SESSIONS);
      expect(report.runs).toBe(SESSIONS);
      console.log(
        `manySessions: ${SESSIONS} sessions, ${report.events} events, ${held.length} runs held by the killed worker, ` +
          `${Date.now() - started} ms`,
      );
    } finally {
      await db.end();
    }
  }, 60_000);
});
