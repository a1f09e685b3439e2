/**
 * Fault: kill -9 the worker while an outcome's grader is evaluating the agent's attempt. The
 * evaluation's start is committed, its verdict is not: the next worker that claims the run grades
 * again under the same start, and the history ends with exactly one start and one verdict.
 *
 * One replica and real `awaken worker` processes on a fresh PostgreSQL schema. The first worker's
 * offline model streams slowly (AWAKEN_OFFLINE_DELAY_MS), so its grader is surely in flight when
 * the start is seen in the database; the second worker's answers at once.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, startFaultCluster, until } from "../support/faultCluster.js";
import { checkHistoryInvariants, sessionFacts } from "../support/historyInvariants.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { createSession } from "../support/sdkHelpers.js";

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

const ofType = <F extends { type: string }>(facts: F[], type: string): F[] =>
  facts.filter((f) => f.type === type);
const isEndTurn = (f: { type: string; body: Record<string, unknown> }) =>
  f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";

describe("fault: a worker killed while an outcome's grader evaluates", () => {
  it("the next worker grades under the same start: exactly one verdict", async () => {
    const c = cluster!;
    const replica = await c.startReplica();
    const first = await c.startWorker(replica.url, { AWAKEN_OFFLINE_DELAY_MS: "150" }, [
      "--concurrency",
      "1",
    ]);
    const { session } = await createSession(replica.client);
    await replica.client.beta.sessions.events.send(session.id, {
      events: [
        {
          type: "user.define_outcome",
          description: "Say hello.",
          rubric: { type: "text", content: "offline-verdict: satisfied" },
        },
      ],
    });

    const started = await until(
      "the evaluation's start",
      async () => ofType(await sessionFacts(c.databaseUrl, session.id), "span.outcome_evaluation_start")[0],
      20_000,
    );
    first.child.kill("SIGKILL");
    // Killed before its verdict: the grader's answer needs seconds at this pace.
    const atKill = await sessionFacts(c.databaseUrl, session.id);
    expect(ofType(atKill, "span.outcome_evaluation_end")).toEqual([]);

    await c.startWorker(replica.url, {}, ["--concurrency", "1"]);
    const facts = await until(
      "the second worker's end_turn",
      async () => {
        const f = await sessionFacts(c.databaseUrl, session.id);
        return f.some(isEndTurn) ? f : undefined;
      },
      20_000,
    );
    const starts = ofType(facts, "span.outcome_evaluation_start");
    const ends = ofType(facts, "span.outcome_evaluation_end");
    expect(starts.map((f) => f.id)).toEqual([started.id]);
    expect(ends).toHaveLength(1);
    expect(ends[0]?.body).toMatchObject({
      outcome_evaluation_start_id: started.id,
      iteration: 0,
      result: "satisfied",
    });
    // The attempt was not redone: one answer, graded once it was re-claimed.
    expect(ofType(facts, "agent.message")).toHaveLength(1);
    const evaluation = (await replica.client.beta.sessions.retrieve(session.id)).outcome_evaluations;
    expect(evaluation).toMatchObject([{ result: "satisfied", iteration: 0 }]);

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
  }, 90_000);
});
