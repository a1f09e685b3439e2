import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InProcessCommittedFactsFeed } from "../../src/coordinator/committedFactsFeed.js";
import type { CommittedFact } from "../../src/coordinator/facts.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import { localWorkerGateway } from "../../src/coordinator/localWorkerGateway.js";
import type { CoordinatorPorts, HistoryReader } from "../../src/coordinator/ports.js";
import type { TailItem } from "../../src/coordinator/sessionTail.js";
import { StoreSessionTail } from "../../src/coordinator/storeSessionTail.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { newId } from "../../src/kernel/ids.js";
import {
  BACKEND_NAMES,
  backendUnavailable,
  op,
  type StoreFixture,
  sessionWithQueuedRun,
} from "../support/storeFixtures.js";

let fx: (StoreFixture & { runId: string }) | null = null;
let reads = 0;

afterEach(async () => {
  await fx?.handle.close();
  fx = null;
});

/** The fixture's history with `readThread` counted: what the feed exists to save. */
function counted(real: HistoryReader): HistoryReader {
  return {
    readThread: (threadId, afterSeq, limit) => {
      reads += 1;
      return real.readThread(threadId, afterSeq, limit);
    },
    threadVersion: (threadId) => real.threadVersion(threadId),
    listEvents: (sessionId, threadId, query) => real.listEvents(sessionId, threadId, query),
  };
}

async function take(iterator: AsyncIterator<TailItem>, count: number): Promise<CommittedFact[]> {
  const facts: CommittedFact[] = [];
  while (facts.length < count) {
    const next = await iterator.next();
    if (next.done) throw new Error(`the tail ended after ${facts.length} of ${count} facts`);
    if (next.value.kind === "fact") facts.push(next.value.fact);
  }
  return facts;
}

describe.each(BACKEND_NAMES)("a tail fed by this process's commits: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
    reads = 0;
  });

  async function setup() {
    fx = await sessionWithQueuedRun(backend);
    const signals = new InProcessWakeSignals();
    const committed = new InProcessCommittedFactsFeed();
    const ports: CoordinatorPorts = {
      ...fx.stores,
      signals,
      evidence: new InProcessLiveEvidenceBus(),
      committed,
    };
    const tail = new StoreSessionTail({
      history: counted(fx.stores.history),
      signals,
      evidence: ports.evidence,
      committed,
      pollMs: 60_000,
    });
    const controller = new AbortController();
    const iterator = tail
      .open(fx.session, { afterSeq: 1, signal: controller.signal })
      [Symbol.asyncIterator]();
    return { f: fx, ports, signals, gateway: localWorkerGateway(ports), iterator, controller };
  }

  it("yields exactly the committed rows without reading them back", async () => {
    const { f, gateway, iterator, controller } = await setup();
    const claim = (await gateway.claim("w1", 60_000))!;
    const ownClaim = { owner: "w1", epoch: claim.epoch };
    const first = await gateway.commit(op(f, ownClaim, 1, 2));
    const second = await gateway.commit(op(f, ownClaim, 3, 3, "done"));
    expect(first.ok && second.ok).toBe(true);
    const yielded = await take(iterator, 5);
    const stored = await f.stores.history.readThread(f.session.threadId, 1);
    expect(yielded).toEqual(stored);
    // At most the replay's read on opening: the five facts came from the commits, not the store.
    expect(reads).toBeLessThanOrEqual(1);
    controller.abort();
  });

  it("reads the store on a gap (a commit it was not handed) and still yields every fact in order", async () => {
    const { f, gateway, signals, iterator, controller } = await setup();
    const claim = (await gateway.claim("w1", 60_000))!;
    const ownClaim = { owner: "w1", epoch: claim.epoch };
    await gateway.commit(op(f, ownClaim, 1, 1));
    expect((await take(iterator, 1)).map((fact) => fact.seq)).toEqual([2]);
    const before = reads;
    // Another replica's input: committed and announced by its signal, never handed to this process.
    const outcome = await f.stores.ledger.append(
      f.session.id,
      () => ({
        facts: [{ id: newId("sevt"), type: "user.message", body: { content: [] } }],
        effects: [],
        echoIds: [],
      }),
      f.clock.now(),
    );
    // This process's next commit comes first on the feed: it does not continue the cursor.
    await gateway.commit(op(f, ownClaim, 3, 2));
    signals.threadCommitted(f.session.threadId, outcome.committed[0]!.seq);
    const yielded = await take(iterator, 3);
    expect(yielded).toEqual(await f.stores.history.readThread(f.session.threadId, 2));
    expect(yielded.map((fact) => fact.seq)).toEqual([3, 4, 5]);
    expect(reads).toBeGreaterThan(before);
    controller.abort();
  });
});

describe.each(BACKEND_NAMES)("a tail that starts at the version read with the session: %s", (backend) => {
  beforeEach((ctx) => {
    const reason = backendUnavailable(backend);
    if (reason) ctx.skip(reason);
    reads = 0;
  });

  it("reads neither the version nor the rows, and still yields every fact after that version", async () => {
    fx = await sessionWithQueuedRun(backend);
    const f = fx;
    let versionReads = 0;
    const history = counted(f.stores.history);
    const signals = new InProcessWakeSignals();
    const committed = new InProcessCommittedFactsFeed();
    const ports: CoordinatorPorts = {
      ...f.stores,
      signals,
      evidence: new InProcessLiveEvidenceBus(),
      committed,
    };
    const tail = new StoreSessionTail({
      history: {
        ...history,
        threadVersion: (threadId) => {
          versionReads += 1;
          return history.threadVersion(threadId);
        },
      },
      signals,
      evidence: ports.evidence,
      committed,
      pollMs: 60_000,
    });
    const found = await f.stores.sessions.getWithThreadVersion?.("wrkspc_test", f.session.id);
    expect(found?.session.id).toBe(f.session.id);
    expect(found?.threadVersion).toBe(1);
    // A commit after the read and before the open: not handed to the tail, found at the next signal.
    const gateway = localWorkerGateway(ports);
    const claim = (await gateway.claim("w1", 60_000))!;
    const ownClaim = { owner: "w1", epoch: claim.epoch };
    await f.stores.dispatch.commit(op(f, ownClaim, 1, 1));
    const controller = new AbortController();
    const iterator = tail
      .open(f.session, { fromVersion: found!.threadVersion, signal: controller.signal })
      [Symbol.asyncIterator]();
    await gateway.commit(op(f, ownClaim, 2, 2, "done"));
    const yielded = await take(iterator, 3);
    expect(yielded).toEqual(await f.stores.history.readThread(f.session.threadId, 1));
    expect(versionReads).toBe(0);
    // One read for the commit it was not handed (the gap), none for the ones it was.
    expect(reads).toBe(1);
    controller.abort();
  });
});
