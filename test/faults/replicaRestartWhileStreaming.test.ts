/**
 * Fault: the replica a client streams from dies mid-turn. Two `awaken up` replicas share one
 * PostgreSQL schema; the worker is attached to A, the client streams from B. B is SIGKILLed while
 * the model answers. The client does what a resilient SDK user does: opens a stream on A, rebuilds
 * from `events.list`, merges by event id, and carries on with another message. What it assembled
 * must be exactly the committed history, in order, with nothing twice.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FaultCluster, startFaultCluster } from "../support/faultCluster.js";
import { checkHistoryInvariants } from "../support/historyInvariants.js";
import { postgresUnavailable } from "../support/postgresFixtures.js";
import {
  createSession,
  history,
  isEndTurnIdle,
  StreamReader,
  userMessage,
  type WireEvent,
} from "../support/sdkHelpers.js";

let cluster: FaultCluster | undefined;
const readers: StreamReader[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  cluster = await startFaultCluster({ leaseMs: 2000 });
});
afterEach(async () => {
  for (const r of readers.splice(0)) await r.close();
  await cluster?.dispose();
  cluster = undefined;
});

/** A client-side view of one session, merged from any number of sources, deduplicated by id. */
class Assembled {
  readonly events: WireEvent[] = [];
  private readonly ids = new Set<string>();
  /** How many events were offered again after the client already had them. */
  duplicatesOffered = 0;

  add(events: Iterable<WireEvent>): void {
    for (const event of events) {
      if (this.ids.has(event.id)) {
        this.duplicatesOffered++;
        continue;
      }
      this.ids.add(event.id);
      this.events.push(event);
    }
  }
}

describe("fault: the replica a client streams from dies mid-turn", () => {
  it("SIGKILL replica B mid-turn: the client reconnects to A, rebuilds from events.list and continues", async () => {
    const c = cluster!;
    const a = await c.startReplica();
    const b = await c.startReplica();
    // ~16 words at 100 ms: the turn is still running when B dies.
    await c.startWorker(a.url, { AWAKEN_OFFLINE_DELAY_MS: "100" });
    const { session } = await createSession(b.client);

    const onB = await StreamReader.open(b.client, session.id);
    readers.push(onB);
    const text = "keep talking while the replica under my stream goes away";
    await b.client.beta.sessions.events.send(session.id, { events: [userMessage(text)] });
    await onB.until((e) => e.type === "span.model_request_start", { timeoutMs: 10_000 });
    expect(onB.events.some(isEndTurnIdle)).toBe(false); // mid-turn

    b.child.kill("SIGKILL");
    await b.exited;
    await onB.end(5_000); // the client sees its stream break
    const assembled = new Assembled();
    assembled.add(onB.events);

    // Reconnect to A: open the live tail first, then read the history, so nothing falls in between.
    const onA = await StreamReader.open(a.client, session.id);
    readers.push(onA);
    assembled.add(await history(a.client, session.id));
    const firstIdle = assembled.events.find(isEndTurnIdle) ?? (await onA.until(isEndTurnIdle));
    assembled.add(onA.events);
    expect(firstIdle).toBeDefined();

    // Carry on through A: another message, seen to completion on the new stream.
    const from = onA.events.length;
    const [echo] = (
      await a.client.beta.sessions.events.send(session.id, { events: [userMessage("still there?")] })
    ).data as unknown as WireEvent[];
    await onA.until((e) => e.id === echo?.id, { from });
    await onA.until(isEndTurnIdle, { from });
    assembled.add(onA.events);

    // What the client assembled is the committed history, in order, each event once.
    const committed = await history(a.client, session.id);
    expect(assembled.events.map((e) => e.id)).toEqual(committed.map((e) => e.id));
    expect(new Set(assembled.events.map((e) => e.id)).size).toBe(assembled.events.length);
    expect(assembled.duplicatesOffered).toBeGreaterThan(0); // the list overlapped B's stream
    const answers = committed.filter((e) => e.type === "agent.message");
    expect(answers).toHaveLength(2);
    expect(JSON.stringify(answers[0])).toContain(`You said: ${text}`);
    expect(JSON.stringify(answers[1])).toContain("You said: still there?");
    expect(committed.filter(isEndTurnIdle)).toHaveLength(2);

    const report = await checkHistoryInvariants(c.databaseUrl);
    expect(report.violations).toEqual([]);
    expect(report.runs).toBe(2);
  }, 40_000);
});
