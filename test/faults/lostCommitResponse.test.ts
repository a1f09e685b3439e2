/**
 * Fault: the coordinator commits a worker's operation, but the response never reaches the worker
 * (the connection dies on the way back). The worker cannot know whether its commit happened; it
 * retries the same operation (same id, same payload) and must get the original receipt, so the
 * facts are in history exactly once and the turn goes on.
 *
 * A TCP proxy between the worker and the server forwards a commit request whole, waits for the
 * server to start answering (so the commit is durable), and destroys the connection instead of
 * relaying the answer. That is done to the first commit of each of two turns: a plain turn is one
 * commit (the span start rides with the answer, its end and the idle that settles the run).
 */

import pg from "pg";
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
  cluster = await startFaultCluster({ leaseMs: 5000 });
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await cluster?.dispose();
  cluster = undefined;
});

interface CommitBody {
  op: { opId: string; facts: Array<{ id: string; type: string }>; settle?: string };
}

describe("fault: a commit's response is lost after the server committed", () => {
  it("the retry with the same operation id gets the original receipt; the facts are stored once", async () => {
    const c = cluster!;
    const replica = await c.startReplica();
    proxy = await startTcpProxy(replica.url);
    const dropped: string[] = [];
    proxy.setDecider((r) => {
      if (r.path !== "/v1/awaken/worker/commit" || dropped.length === 2) return "forward";
      const { op } = JSON.parse(r.body) as CommitBody;
      // Lose the answer to each turn's first commit, the one that settles its run; its retry (same
      // operation id) goes through.
      if (op.settle !== "done" || dropped.includes(op.opId)) return "forward";
      dropped.push(op.opId);
      return "drop_response";
    });
    const worker = await c.startWorker(proxy.url, {}, ["--concurrency", "1"]);
    const { session } = await createSession(replica.client);
    await replica.client.beta.sessions.events.send(session.id, { events: [userMessage("exactly once")] });

    await until(
      "the turn's end_turn idle",
      async () => (await sessionFacts(c.databaseUrl, session.id)).some(isEndTurn),
      20_000,
    );
    // The run settles with the commit whose answer was lost: wait until the worker moved on.
    await until("the run slice to end", () =>
      logLines(worker).find((l) => l.msg === "run slice ended" && l.outcome === "settled"),
    );

    expect(dropped).toHaveLength(1);
    const [first] = proxy.requests
      .filter((r) => r.path === "/v1/awaken/worker/commit")
      .map((r) => JSON.parse(r.body) as CommitBody);
    // The turn's one commit: the span start is committed with the answer, not before the request.
    expect(first?.op.opId).toBe(dropped[0]);
    expect(first?.op.facts.map((f) => f.type)).toEqual([
      "span.model_request_start",
      "agent.message",
      "span.model_request_end",
      "session.usage",
      "session.status_idle",
    ]);
    expect(first?.op.settle).toBe("done");

    // A second turn on the same session still works through the same proxy, losing its answer too.
    await replica.client.beta.sessions.events.send(session.id, { events: [userMessage("and again")] });
    await until(
      "the second end_turn",
      async () => (await sessionFacts(c.databaseUrl, session.id)).filter(isEndTurn).length === 2,
      20_000,
    );
    await until(
      "the second run slice to end",
      () =>
        logLines(worker).filter((l) => l.msg === "run slice ended" && l.outcome === "settled").length === 2,
    );

    // Both lost answers were retried with the same operation id and the same payload.
    expect(dropped).toHaveLength(2);
    const commits = proxy.requests.filter((r) => r.path === "/v1/awaken/worker/commit");
    for (const opId of dropped) {
      const attempts = commits.filter((r) => (JSON.parse(r.body) as CommitBody).op.opId === opId);
      expect(attempts.length).toBeGreaterThanOrEqual(2);
      expect(attempts[0]?.fate).toBe("drop_response");
      expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    }

    // One receipt per operation, and each of its facts stored exactly once.
    const facts = await sessionFacts(c.databaseUrl, session.id);
    const receipts = await storedReceipts(c.databaseUrl, dropped);
    expect(receipts).toHaveLength(2);
    for (const receipt of receipts) {
      for (const eventId of receipt.eventIds) expect(facts.filter((f) => f.id === eventId)).toHaveLength(1);
    }

    expect(facts.filter((f) => f.type === "span.model_request_start")).toHaveLength(2);
    expect(facts.filter((f) => f.type === "span.model_request_end")).toHaveLength(2);
    const answers = facts.filter((f) => f.type === "agent.message");
    expect(answers).toHaveLength(2);
    expect(JSON.stringify(answers[0]?.body)).toContain("You said: exactly once");
    expect(facts.filter((f) => f.type === "session.status_idle")).toHaveLength(2);
    // The worker noticed the lost answers and carried on, without abandoning the run.
    expect(logLines(worker).some((l) => l.msg === "claim lost; abandoning run")).toBe(false);

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
    expect(report.runs).toBe(2);
  }, 40_000);
});

function isEndTurn(f: { type: string; body: Record<string, unknown> }): boolean {
  return f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";
}

/**
 * The receipts stored under `opIds`: a fenced commit's row (its operation id is its own, or the
 * usual `op_<run>_v<version>` it leaves implied), or a `commit_operations` row (a commit without facts).
 */
async function storedReceipts(url: string, opIds: string[]): Promise<Array<{ eventIds: string[] }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{
      op_id: string | null;
      run_id: string;
      base_version: string;
      facts_json: string;
    }>("select op_id, run_id, base_version, facts_json from commits where run_id is not null");
    const fromCommits = rows.rows
      .filter((r) => opIds.includes(r.op_id ?? `op_${r.run_id}_v${Number(r.base_version)}`))
      .map((r) => ({ eventIds: (JSON.parse(r.facts_json) as [string][]).map(([id]) => id) }));
    const operations = await client.query<{ receipt_json: string }>(
      "select receipt_json from commit_operations where op_id = any($1::text[])",
      [opIds],
    );
    return [
      ...fromCommits,
      ...operations.rows.map((r) => JSON.parse(r.receipt_json) as { eventIds: string[] }),
    ];
  } finally {
    await client.end();
  }
}
