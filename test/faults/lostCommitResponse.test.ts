/**
 * Fault: the coordinator commits a worker's operation, but the response never reaches the worker
 * (the connection dies on the way back). The worker cannot know whether its commit happened; it
 * retries the same operation (same id, same payload) and must get the original receipt, so the
 * facts are in history exactly once and the turn goes on.
 *
 * A TCP proxy between the worker and the server forwards the first commit request whole, waits for
 * the server to start answering (so the commit is durable), and destroys the connection instead of
 * relaying the answer. The same is done to the commit that settles the run.
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
      // Lose the answer to the first commit (the model span start) and to the first settling one;
      // their retries (same operation id) go through.
      const lose = dropped.length === 0 || (op.settle === "done" && !dropped.includes(op.opId));
      if (!lose) return "forward";
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
    const [first] = commits.map((r) => JSON.parse(r.body) as CommitBody);
    expect(first?.op.facts.map((f) => f.type)).toEqual(["span.model_request_start"]);

    expect(facts.filter((f) => f.type === "span.model_request_start")).toHaveLength(1);
    expect(facts.filter((f) => f.type === "span.model_request_end")).toHaveLength(1);
    const answers = facts.filter((f) => f.type === "agent.message");
    expect(answers).toHaveLength(1);
    expect(JSON.stringify(answers[0]?.body)).toContain("You said: exactly once");
    expect(facts.filter((f) => f.type === "session.status_idle")).toHaveLength(1);
    // The worker noticed the lost answers and carried on, without abandoning the run.
    expect(logLines(worker).some((l) => l.msg === "claim lost; abandoning run")).toBe(false);

    // A second turn on the same session still works through the same proxy.
    await replica.client.beta.sessions.events.send(session.id, { events: [userMessage("and again")] });
    await until(
      "the second end_turn",
      async () => (await sessionFacts(c.databaseUrl, session.id)).filter(isEndTurn).length === 2,
      20_000,
    );
    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
    expect(report.runs).toBe(2);
  }, 40_000);
});

function isEndTurn(f: { type: string; body: Record<string, unknown> }): boolean {
  return f.type === "session.status_idle" && (f.body.stop_reason as { type?: string })?.type === "end_turn";
}

async function storedReceipts(url: string, opIds: string[]): Promise<Array<{ eventIds: string[] }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ receipt_json: string }>(
      "select receipt_json from commit_operations where op_id = any($1::text[])",
      [opIds],
    );
    return rows.map((r) => JSON.parse(r.receipt_json) as { eventIds: string[] });
  } finally {
    await client.end();
  }
}
