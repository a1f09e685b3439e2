/**
 * Fault: a worker freezes (SIGSTOP) mid-model-call for longer than its lease. Another worker takes
 * the run over (epoch + 1), asks the model again and finishes the turn (the frozen request had
 * committed nothing: its span is committed with its answer). Then the first
 * worker thaws (SIGCONT) and finishes its own, now stale, model call: the commit fence must reject
 * its late answer and settle, and it must abandon the run.
 *
 * The stale worker reaches the coordinator through a TCP proxy that, once it thaws, holds its lease
 * renewals (as a partitioned network would). Without that, a renewal answering `held: false` could
 * abort the model call first and the late commit would never be attempted; holding them makes the
 * fence, not the renewal, the thing that stops it, every run.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, logLines, startFaultCluster, until } from "../support/faultCluster.js";
import { checkHistoryInvariants, sessionFacts } from "../support/historyInvariants.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import { createSession, userMessage } from "../support/sdkHelpers.js";
import { startTcpProxy, type TcpProxy } from "../support/tcpProxy.js";

let cluster: FaultCluster | undefined;
let proxy: TcpProxy | undefined;

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  cluster = await startFaultCluster({ leaseMs: 1000 });
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await cluster?.dispose();
  cluster = undefined;
});

const isCommit = (path: string) => path === "/v1/awaken/worker/commit";

describe("fault: a worker stalled past its lease", () => {
  it("SIGSTOP past the lease: a second worker finishes, the thawed worker's late commit and settle are rejected", async () => {
    const c = cluster!;
    const replica = await c.startReplica();
    proxy = await startTcpProxy(replica.url);
    // ~20 words at 150 ms each: the model call of the first worker lasts about 3 s.
    const stalled = await c.startWorker(proxy.url, { AWAKEN_OFFLINE_DELAY_MS: "150" }, [
      "--concurrency",
      "1",
    ]);
    const { session } = await createSession(replica.client);
    const text = "please stay in flight long enough for the freeze to outlast the lease";
    await replica.client.beta.sessions.events.send(session.id, { events: [userMessage(text)] });

    // Mid-turn: the model is streaming deltas (evidence batches); nothing of the request is committed.
    const firstPreview = await until("the stalled worker's first streamed delta", () =>
      proxy!.requests.find((r) => r.path === "/v1/awaken/worker/evidence"),
    );
    const staleMessageId = (
      JSON.parse(firstPreview.body) as { items: Array<{ evidence: { eventId: string } }> }
    ).items[0]?.evidence.eventId;
    expect(staleMessageId).toMatch(/^sevt_/);
    stalled.child.kill("SIGSTOP");

    // A second worker claims once the lease lapsed and finishes the turn.
    await c.startWorker(replica.url, {}, ["--concurrency", "1"]);
    await until(
      "the second worker's end_turn",
      async () => (await sessionFacts(c.databaseUrl, session.id)).some(isEndTurn),
      20_000,
    );

    // Thaw the first worker with its renewals held: it completes its model call and commits.
    proxy.setDecider((r) => (r.path === "/v1/awaken/worker/renew" ? "hold" : "forward"));
    const commitsBefore = proxy.requests.filter((r) => isCommit(r.path)).length;
    stalled.child.kill("SIGCONT");
    const lost = await until(
      "the thawed worker to log that it lost the claim",
      () => logLines(stalled).find((l) => l.msg === "claim lost; abandoning run"),
      15_000,
    );
    const rejection = lost.rejection as { kind: string; reason: string };
    // The new owner may already have used the same derived operation id; either way the fence
    // names the cause: the claim's epoch moved on.
    expect(rejection.kind).toBe("stale_claim");
    console.log(
      `workerStalledPastLease: the late commit was rejected as ${rejection.kind}: ${rejection.reason}`,
    );
    await until("the abandoned run slice", () =>
      logLines(stalled).find((l) => l.msg === "run slice ended" && l.outcome === "lost_claim"),
    );

    // The late commit really was attempted, carried the answer and the settle, and was refused.
    const lateCommits = proxy.requests.filter((r) => isCommit(r.path)).slice(commitsBefore);
    expect(lateCommits.length).toBeGreaterThanOrEqual(1);
    const late = JSON.parse(lateCommits[0]!.body) as {
      op: { facts: Array<{ id: string; type: string }>; settle?: string };
    };
    expect(late.op.settle).toBe("done");
    expect(late.op.facts.map((f) => f.id)).toContain(staleMessageId);
    // The frozen request's span start rode on that commit, and was refused with it.
    const staleStart = late.op.facts.find((f) => f.type === "span.model_request_start");
    expect(staleStart).toBeDefined();

    // History: one question, exactly one answer (the second worker's), the stale one nowhere.
    const facts = await sessionFacts(c.databaseUrl, session.id);
    expect(facts.filter((f) => f.type === "user.message")).toHaveLength(1);
    const answers = facts.filter((f) => f.type === "agent.message");
    expect(answers).toHaveLength(1);
    expect(answers[0]?.id).not.toBe(staleMessageId);
    expect(JSON.stringify(answers[0]?.body)).toContain(`You said: ${text}`);
    expect(facts.some((f) => f.id === staleMessageId)).toBe(false);
    // The frozen request left nothing; the new owner asked once, and that request answered.
    const ends = facts.filter((f) => f.type === "span.model_request_end");
    expect(facts.filter((f) => f.type === "span.model_request_start")).toHaveLength(1);
    expect(facts.some((f) => f.id === staleStart?.id)).toBe(false);
    expect(ends.map((f) => f.body.is_error)).toEqual([false]);
    expect(facts.filter(isEndTurn)).toHaveLength(1);

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
    expect(report.runs).toBe(1);
  }, 40_000);
});

function isEndTurn(f: { type: string; body: Record<string, unknown> }): boolean {
  return f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";
}
