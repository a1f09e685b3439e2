/**
 * Fault: kill -9 the worker while a child thread's model call is in flight. The parent's spawn is
 * committed and the parent is parked on the child's answer; only the child's run is claimed again.
 * The next worker finishes the child alone: one thread, one task, one answer back to the parent,
 * and the parent's own spawning call is not repeated.
 *
 * One replica and real `awaken worker` processes on a fresh PostgreSQL schema. The first worker's
 * offline model streams slowly (AWAKEN_OFFLINE_DELAY_MS), so the child's call is surely in flight
 * when its start is seen in the database; the second worker's answers at once.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, startFaultCluster, until } from "../support/faultCluster.js";
import { checkHistoryInvariants } from "../support/historyInvariants.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { leadWithResearcher } from "../support/subagentSetup.js";

let cluster: FaultCluster | undefined;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  cluster = await startFaultCluster({ leaseMs: 1000 });
});
afterEach(async () => {
  await cluster?.dispose();
  cluster = undefined;
});

interface ThreadFact {
  thread: string;
  id: string;
  type: string;
  body: Record<string, unknown>;
}

/** Every committed fact of the session, on every thread, in each thread's order. */
async function threadFacts(url: string, sessionId: string): Promise<ThreadFact[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ thread_id: string; id: string; type: string; body_json: string }>(
      "select thread_id, id, type, body_json from events where session_id = $1 order by thread_id, seq",
      [sessionId],
    );
    return rows.map((r) => ({ thread: r.thread_id, id: r.id, type: r.type, body: JSON.parse(r.body_json) }));
  } finally {
    await client.end();
  }
}

/** A task of many words: the child's echo of it streams word by word, for seconds at the first worker's pace. */
const TASK = Array.from({ length: 60 }, (_, i) => `step${i}`).join(" ");

/** The state of the newest run on `thread`. */
async function runStateOf(url: string, thread: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ state: string }>(
      "select state from runs where thread_id = $1 order by created_at desc limit 1",
      [thread],
    );
    return rows[0]?.state;
  } finally {
    await client.end();
  }
}

const ofType = (facts: ThreadFact[], type: string) => facts.filter((f) => f.type === type);
const isEndTurn = (f: ThreadFact) =>
  f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";

describe("fault: a worker killed during a child thread's model call", () => {
  it("only the child resumes on the next worker: one thread, one task, one answer to the parent", async () => {
    const c = cluster!;
    const replica = await c.startReplica();
    const client = replica.client;
    const { leadId, environmentId } = await leadWithResearcher(client, "child-fault");
    const session = await client.beta.sessions.create({ agent: leadId, environment_id: environmentId });
    const first = await c.startWorker(replica.url, { AWAKEN_OFFLINE_DELAY_MS: "150" }, [
      "--concurrency",
      "1",
    ]);
    await client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.message",
          content: [
            { type: "text", text: `call spawn_agent {"agent_name":"researcher","message":"${TASK}"}` },
          ],
        },
      ],
    });

    // The child's run is claimed and its model call streams (its span is committed with the answer,
    // seconds from now at this pace): kill the worker in the middle of it.
    const child = await until(
      "the child's run claimed",
      async () => {
        const created = ofType(await threadFacts(c.databaseUrl, session.id), "session.thread_created")[0];
        const thread = created?.body.session_thread_id as string | undefined;
        return thread && (await runStateOf(c.databaseUrl, thread)) === "claimed" ? thread : undefined;
      },
      30_000,
    );
    // Its echo takes about 9 s at 150 ms a word: one second in, the call is surely streaming.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    first.child.kill("SIGKILL");
    const atKill = await threadFacts(c.databaseUrl, session.id);
    expect(atKill.filter((f) => f.thread === child && f.type === "agent.message")).toEqual([]);
    const parentAtKill = atKill.filter((f) => f.thread !== child);

    await c.startWorker(replica.url, {}, ["--concurrency", "1"]);
    const facts = await until(
      "the parent's end_turn",
      async () => {
        const f = await threadFacts(c.databaseUrl, session.id);
        return f.some((x) => x.thread !== child && isEndTurn(x)) ? f : undefined;
      },
      30_000,
    );
    const parent = facts.filter((f) => f.thread !== child);
    const own = facts.filter((f) => f.thread === child);
    expect(new Set(parent.map((f) => f.thread)).size).toBe(1);

    // The parent's history up to the kill is untouched: its spawn was not made again.
    expect(parent.slice(0, parentAtKill.length).map((f) => f.id)).toEqual(parentAtKill.map((f) => f.id));
    expect(ofType(parent, "session.thread_created")).toHaveLength(1);
    expect(ofType(parent, "agent.thread_message_sent")).toHaveLength(1);
    const received = ofType(parent, "agent.thread_message_received");
    expect(received).toHaveLength(1);
    expect(JSON.stringify(received[0]?.body)).toContain(`You said: ${TASK}`);

    // The child: its task once, one answer (the killed call left nothing), sent back once.
    expect(ofType(own, "agent.thread_message_received")).toHaveLength(1);
    expect(ofType(own, "agent.message")).toHaveLength(1);
    expect(ofType(own, "agent.thread_message_sent")).toHaveLength(1);
    const starts = ofType(own, "span.model_request_start").map((f) => f.id);
    const ends = ofType(own, "span.model_request_end").map((f) => f.body.model_request_start_id);
    expect(starts).toHaveLength(1);
    expect([...ends].sort()).toEqual([...starts].sort());

    const threads = [];
    for await (const thread of client.beta.sessions.threads.list(session.id)) threads.push(thread);
    expect(threads).toHaveLength(2);
    expect(threads.find((t) => t.id === child)).toMatchObject({ status: "idle" });

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
  }, 120_000);
});
