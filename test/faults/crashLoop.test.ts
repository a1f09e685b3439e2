/**
 * Fault (crash loop): a run that crashes its worker again and again ends in a terminal state
 * with a clear error once its crash budget (5) is spent, instead of looping.
 *
 * One `awaken up --workers 0` replica on a fresh PostgreSQL schema and real `awaken worker`
 * processes. The run is poison in the way that matters in production: every worker that claims it
 * dies while the model call is in flight (SIGKILL, as the OOM killer would), i.e. after the claim
 * but before anything about the request was committed (a request's span is committed with its
 * answer). A claim that commits nothing is not progress: were it counted as progress, each claim
 * would reset the budget and the run would be claimed and killed forever. The model is a fake
 * Anthropic server in this process, so "in flight" is the server having received the request.
 * Six workers are killed that way; the seventh claim must end the run without asking the model
 * again, commit a session.error naming the crashes and go idle with `retries_exhausted`, leaving
 * no trace of the six cut-off requests; the session must then take new input normally.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { logLines, until, useFaultCluster } from "../support/faultCluster.js";
import { checkHistoryInvariants, sessionFacts } from "../support/historyInvariants.js";
import { history, isEndTurnIdle, MODEL, stopReason, userMessage } from "../support/sdkHelpers.js";

const LEASE_MS = 600;
/** The product's crash budget (cli/worker.ts): the claim after the sixth crash ends the run. */
const CRASH_BUDGET = 5;

const faultCluster = useFaultCluster({ leaseMs: LEASE_MS });

let fake: FakeModelServer;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake.close();
});

type Fact = Awaited<ReturnType<typeof sessionFacts>>[number];
const starts = (facts: Fact[]) => facts.filter((f) => f.type === "span.model_request_start");
const ends = (facts: Fact[]) => facts.filter((f) => f.type === "span.model_request_end");

describe("fault: a run that crashes every worker that claims it", () => {
  it("is ended with a clear error once its crash budget is spent, and the session takes input again", async () => {
    const c = faultCluster();
    const started = Date.now();
    const replica = await c.startReplica();
    const client = replica.client;
    const agent = await client.beta.agents.create({ name: "Poison", model: MODEL });
    const environment = await client.beta.environments.create({ name: "poison" });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: environment.id });
    await client.beta.sessions.events.send(session.id, {
      events: [userMessage("please answer with a long, slow reply")],
    });

    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    try {
      const run = async () => {
        const { rows } = await db.query<{ id: string; state: string; owner: string | null; epoch: string }>(
          "select id, state, owner, epoch from runs where session_id = $1",
          [session.id],
        );
        expect(rows).toHaveLength(1);
        return { ...rows[0]!, epoch: Number(rows[0]!.epoch) };
      };

      // Every request of the doomed claims streams its opening and then never finishes.
      fake.setFallback({ kind: "hang" });
      const modelEnv = { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url };
      for (let crash = 1; crash <= CRASH_BUDGET + 1; crash++) {
        const worker = await c.startWorker(replica.url, modelEnv, [
          "--concurrency",
          "1",
          "--id",
          `doomed-${crash}`,
        ]);
        // This worker's claim is in the middle of its model call: the model has its request.
        await fake.waitForRequests(crash, 20_000);
        const r = await run();
        expect(r.owner).toMatch(new RegExp(`^doomed-${crash}\\.`));
        expect(r.epoch).toBe(crash);
        worker.child.kill("SIGKILL");
        expect(await worker.exited).toBe("SIGKILL");
      }

      // The seventh claim: crash count 6, past the budget.
      fake.setFallback((body) => ({ kind: "text", text: `answered ${JSON.stringify(body.messages)}` }));
      const last = await c.startWorker(replica.url, modelEnv, ["--concurrency", "1", "--id", "finisher"]);
      const stopped = await until(
        "the run ended as retries_exhausted",
        async () => {
          const events = await history(client, session.id);
          return events.some(
            (e) => e.type === "session.status_idle" && stopReason(e)?.type === "retries_exhausted",
          )
            ? events
            : null;
        },
        20_000,
        50,
      );

      // The model was asked six times, once per doomed claim, and never by the finisher; a request
      // cut off before its answer commits nothing, so no span of them is in history.
      expect(fake.requests).toHaveLength(CRASH_BUDGET + 1);
      const facts = await sessionFacts(c.databaseUrl, session.id);
      expect(starts(facts)).toEqual([]);
      expect(ends(facts)).toEqual([]);
      expect(facts.some((f) => f.type === "agent.message")).toBe(false);
      const [error, idle] = facts.slice(-2);
      expect(error?.type).toBe("session.error");
      expect(error?.body).toMatchObject({
        error: { type: "unknown_error", retry_status: { type: "exhausted" } },
      });
      expect(String((error?.body.error as { message?: string } | undefined)?.message)).toContain(
        `interrupted by ${CRASH_BUDGET + 1} worker crashes`,
      );
      expect(idle?.body).toMatchObject({ stop_reason: { type: "retries_exhausted" } });
      expect(stopped.at(-1)?.type).toBe("session.status_idle");

      const ended = await run();
      expect(ended.state).toBe("failed");
      expect(ended.epoch).toBe(CRASH_BUDGET + 2);
      // The worker logs a slice's end after its last commit answered: the line may trail the run.
      const endedSlices = () =>
        logLines(last).filter((l) => l.msg === "run slice ended" && l.runId === ended.id);
      await expect.poll(() => endedSlices().length, { timeout: 5_000 }).toBeGreaterThan(0);
      expect(endedSlices()).toEqual([
        expect.objectContaining({ epoch: CRASH_BUDGET + 2, outcome: "settled" }),
      ]);

      // Not wedged: the next message is a new run, answered normally by the same worker.
      await client.beta.sessions.events.send(session.id, { events: [userMessage("are you there?")] });
      const answered = await until(
        "the next turn's end_turn",
        async () => {
          const events = await history(client, session.id);
          return events.some(isEndTurnIdle) ? events : null;
        },
        20_000,
        50,
      );
      expect(answered.filter((e) => e.type === "agent.message")).toHaveLength(1);
      // The failed turn's message stays in the conversation, so the model sees both.
      expect(fake.requests).toHaveLength(CRASH_BUDGET + 2);
      const asked = JSON.stringify(fake.requests.at(-1)?.body.messages);
      expect(asked).toContain("please answer with a long, slow reply");
      expect(asked).toContain("are you there?");

      const report = await checkHistoryInvariants(c.databaseUrl);
      expect(report.violations).toEqual([]);
      expect(report.runs).toBe(2);
      console.log(
        `crashLoop: ${CRASH_BUDGET + 1} workers killed mid-call, run ${ended.id} failed at epoch ${ended.epoch}; ` +
          `${report.events} events; total ${Date.now() - started} ms`,
      );
    } finally {
      await db.end();
    }
  }, 120_000);
});
