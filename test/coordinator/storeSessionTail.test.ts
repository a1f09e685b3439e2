import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommittedFact, Fact } from "../../src/coordinator/facts.js";
import { InProcessLiveEvidenceBus } from "../../src/coordinator/liveEvidenceBus.js";
import type {
  HistoryReader,
  LiveEvidence,
  LiveEvidenceBus,
  WakeSignals,
} from "../../src/coordinator/ports.js";
import { type TailItem, type TailOpenOptions, TailOverflowError } from "../../src/coordinator/sessionTail.js";
import { StoreSessionTail } from "../../src/coordinator/storeSessionTail.js";
import { InProcessWakeSignals } from "../../src/coordinator/wakeSignals.js";
import { newId } from "../../src/kernel/ids.js";
import { type StoreFixture, sessionWithQueuedRun } from "../support/storeFixtures.js";

let fx: StoreFixture;
let signals: CountingSignals;
let evidence: CountingEvidence;
let reads: number;
let gate: Promise<void> | null;
let versionGate: Promise<void> | null;

beforeEach(async () => {
  fx = await sessionWithQueuedRun();
  signals = new CountingSignals();
  evidence = new CountingEvidence();
  reads = 0;
  gate = null;
  versionGate = null;
});

afterEach(async () => {
  await fx.handle.close();
});

/** The real store, with reads counted and optionally held back (to let commits race a read). */
function history(): HistoryReader {
  const real = fx.stores.history;
  return {
    readThread: async (threadId, afterSeq, limit) => {
      reads += 1;
      if (gate) await gate;
      return real.readThread(threadId, afterSeq, limit);
    },
    threadVersion: async (threadId) => {
      if (versionGate) await versionGate;
      return real.threadVersion(threadId);
    },
    listEvents: (sessionId, threadId, query) => real.listEvents(sessionId, threadId, query),
  };
}

function tail(maxQueued?: number) {
  return new StoreSessionTail({
    history: history(),
    signals,
    evidence,
    pollMs: 10_000,
    ...(maxQueued === undefined ? {} : { maxQueued }),
  });
}

function open(options: Partial<TailOpenOptions> = {}, maxQueued?: number) {
  const controller = new AbortController();
  const iterator = tail(maxQueued)
    .open(fx.session, { signal: controller.signal, ...options })
    [Symbol.asyncIterator]();
  return { iterator, controller };
}

/** Commits facts as the ledger does and announces the version, as every committer does. */
async function commit(...facts: Array<Partial<Fact> & { type: string }>): Promise<CommittedFact[]> {
  const outcome = await fx.stores.ledger.append(
    fx.session.id,
    () => ({
      facts: facts.map((fact) => ({ id: fact.id ?? newId("sevt"), type: fact.type, body: fact.body ?? {} })),
      effects: [],
      echoIds: [],
    }),
    fx.clock.now(),
  );
  const last = outcome.committed.at(-1);
  if (last) signals.threadCommitted(fx.session.threadId, last.seq);
  return outcome.committed;
}

async function take(iterator: AsyncIterator<TailItem>, count: number): Promise<TailItem[]> {
  const items: TailItem[] = [];
  while (items.length < count) {
    const next = await iterator.next();
    if (next.done) throw new Error(`the tail ended after ${items.length} of ${count} items`);
    items.push(next.value);
  }
  return items;
}

function describeItem(item: TailItem): string {
  return item.kind === "fact" ? `fact ${item.fact.type}` : `${item.evidence.kind} ${item.evidence.eventId}`;
}

const seqs = (items: TailItem[]) => items.map((item) => (item.kind === "fact" ? item.fact.seq : -1));
const message = { type: "agent.message", body: { content: [{ type: "text", text: "x" }] } };

describe("session tail: replay", () => {
  it("from 0 yields every committed fact in order, internal ones included, then what commits live", async () => {
    await commit(message, { type: "awaken.tool_intent" }, message);
    const { iterator, controller } = open({ afterSeq: 0 });
    const replayed = await take(iterator, 4);
    expect(seqs(replayed)).toEqual([1, 2, 3, 4]);
    expect(replayed.map(describeItem)).toEqual([
      "fact user.message",
      "fact agent.message",
      "fact awaken.tool_intent",
      "fact agent.message",
    ]);
    const [live] = await commit(message);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact: live }]);
    controller.abort();
  });

  it("from a middle seq yields only the facts after it", async () => {
    await commit(message, message, message);
    const { iterator, controller } = open({ afterSeq: 2 });
    expect(seqs(await take(iterator, 2))).toEqual([3, 4]);
    await commit(message);
    expect(seqs(await take(iterator, 1))).toEqual([5]);
    controller.abort();
  });

  it("a history longer than a page replays in order, read as the consumer pulls rather than buffered", async () => {
    await commit(...Array.from({ length: 1_300 }, () => message));
    // A bound far below the history: facts are read on demand, so only previews count toward it.
    const { iterator, controller } = open({ afterSeq: 0 }, 5);
    const first = await take(iterator, 10);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The consumer stalled after ten items: the tail read at most a page or two ahead.
    expect(reads).toBeLessThanOrEqual(2);
    const rest = await take(iterator, 1_291);
    expect(seqs([...first, ...rest])).toEqual(Array.from({ length: 1_301 }, (_, i) => i + 1));
    controller.abort();
  });
});

describe("session tail: live only", () => {
  it("without afterSeq, facts committed before opening are not yielded, later ones are", async () => {
    await commit(message, message);
    const { iterator, controller } = open();
    // Let the tail read its start position before the next commit.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const [fact] = await commit(message);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact }]);
    controller.abort();
  });

  it("facts committed while the start position is being read are not lost (subscribe before read)", async () => {
    const { iterator, controller } = open();
    // Committed right after opening, before the tail's first async step could run.
    const committed = await commit(message);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact: committed[0] }]);
    controller.abort();
  });
});

describe("session tail: start position", () => {
  it("is reported once the start read is done, and what commits after it is yielded", async () => {
    let release!: () => void;
    versionGate = new Promise((resolve) => {
      release = resolve;
    });
    let positioned = 0;
    const { iterator, controller } = open({ onPositioned: () => positioned++ });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // A stream answers its client only from here: nothing it promised can have committed yet.
    expect(positioned).toBe(0);
    release();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(positioned).toBe(1);
    const [fact] = await commit(message);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact }]);
    controller.abort();
    expect(positioned).toBe(1);
  });

  it("with afterSeq, or an aborted signal, is reported at once", () => {
    let positioned = 0;
    const { controller } = open({ afterSeq: 0, onPositioned: () => positioned++ });
    expect(positioned).toBe(1);
    controller.abort();
    const aborted = new AbortController();
    aborted.abort();
    tail().open(fx.session, { signal: aborted.signal, onPositioned: () => positioned++ });
    expect(positioned).toBe(2);
  });
});

describe("session tail: previews and facts in commit order", () => {
  it("a preview published before its fact's commit comes before it, even when a read races the commit", async () => {
    const { iterator, controller } = open({ previews: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Hold the tail's reads so the next fact is committed while the read for `first` is pending.
    let release!: () => void;
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const [first] = await commit(message);
    const answerId = newId("sevt");
    const start: LiveEvidence = { kind: "preview_start", eventId: answerId, preview: "text" };
    const delta: LiveEvidence = { kind: "preview_delta", eventId: answerId, index: 0, text: "Hel" };
    evidence.publish(fx.session.id, start);
    evidence.publish(fx.session.id, delta);
    const [answer] = await commit({ ...message, id: answerId });
    gate = null;
    release();
    const items = await take(iterator, 4);
    expect(items).toEqual([
      { kind: "fact", fact: first },
      { kind: "preview", evidence: start },
      { kind: "preview", evidence: delta },
      { kind: "fact", fact: answer },
    ]);
    // Evidence that arrives after its fact is committed is dropped: the fact is the authority.
    evidence.publish(fx.session.id, { kind: "preview_delta", eventId: answerId, index: 0, text: "late" });
    evidence.publish(fx.session.id, start);
    const [after] = await commit(message);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact: after }]);
    controller.abort();
  });

  it("tool-input and thinking previews pass through; an abandoned preview ends it and later deltas are dropped", async () => {
    const { iterator, controller } = open({ previews: true });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const callId = newId("sevt");
    const thinkingId = newId("sevt");
    const published: LiveEvidence[] = [
      { kind: "preview_start", eventId: thinkingId, preview: "thinking" },
      { kind: "preview_delta", eventId: thinkingId, index: 0, text: "hmm" },
      { kind: "preview_start", eventId: callId, preview: "tool_input", toolName: "bash" },
      { kind: "preview_delta", eventId: callId, index: 0, text: '{"command":' },
      { kind: "preview_abandoned", eventId: callId },
    ];
    for (const item of published) evidence.publish(fx.session.id, item);
    evidence.publish(fx.session.id, { kind: "preview_delta", eventId: callId, index: 0, text: '"ls"}' });
    // Deltas of a preview this tail never saw start are not shown either.
    evidence.publish(fx.session.id, { kind: "preview_delta", eventId: newId("sevt"), index: 0, text: "?" });
    const [fact] = await commit(message);
    const items = await take(iterator, 6);
    expect(items).toEqual([
      ...published.map((item) => ({ kind: "preview", evidence: item })),
      { kind: "fact", fact },
    ]);
    controller.abort();
  });

  it("without previews asked for, the tail does not listen to evidence at all", async () => {
    const { iterator, controller } = open();
    expect(evidence.listeners).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    evidence.publish(fx.session.id, { kind: "preview_start", eventId: newId("sevt"), preview: "text" });
    const [fact] = await commit(message);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact }]);
    controller.abort();
  });
});

describe("session tail: termination and cleanup", () => {
  it("ends after session.status_terminated, with every subscription and timer gone", async () => {
    const { iterator } = open({ previews: true, afterSeq: 0 });
    expect(signals.listeners).toBe(1);
    expect(evidence.listeners).toBe(1);
    await commit(message, { type: "session.status_terminated" }, message);
    const items = await take(iterator, 3);
    expect(items.map(describeItem).at(-1)).toBe("fact session.status_terminated");
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    expect(signals.listeners).toBe(0);
    expect(evidence.listeners).toBe(0);
  });

  it("ends after session.deleted, which a tail still reads by thread id", async () => {
    const { iterator } = open({ afterSeq: 1 });
    const deleted = await fx.stores.ledger.deleteSession(
      fx.session.id,
      { id: newId("sevt"), type: "session.deleted", body: {} },
      fx.clock.now(),
    );
    if (deleted) signals.threadCommitted(fx.session.threadId, deleted.seq);
    expect(await take(iterator, 1)).toEqual([{ kind: "fact", fact: deleted }]);
    expect((await iterator.next()).done).toBe(true);
    expect(signals.listeners).toBe(0);
  });

  it("an abort ends a pending pull and removes every subscription and the poll timer", async () => {
    const controller = new AbortController();
    const quickPoll = new StoreSessionTail({ history: history(), signals, evidence, pollMs: 5 });
    const iterator = quickPoll
      .open(fx.session, { signal: controller.signal, previews: true })
      [Symbol.asyncIterator]();
    const pending = iterator.next();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(reads).toBeGreaterThan(0);
    controller.abort();
    expect(await pending).toEqual({ value: undefined, done: true });
    expect(signals.listeners).toBe(0);
    expect(evidence.listeners).toBe(0);
    const readsAtAbort = reads;
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(reads).toBe(readsAtAbort);
  });

  it("leaving a for-await loop (return()) cleans up the same way", async () => {
    await commit(message);
    const controller = new AbortController();
    for await (const item of tail().open(fx.session, {
      signal: controller.signal,
      previews: true,
      afterSeq: 0,
    })) {
      expect(item.kind).toBe("fact");
      break;
    }
    expect(signals.listeners).toBe(0);
    expect(evidence.listeners).toBe(0);
  });

  it("an already aborted signal yields nothing and subscribes to nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    const iterator = tail()
      .open(fx.session, { signal: controller.signal, afterSeq: 0 })
      [Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    expect(signals.listeners).toBe(0);
  });
});

describe("session tail: a consumer that stops pulling", () => {
  it("previews beyond the bound end the iteration with TailOverflowError after what was queued", async () => {
    const { iterator, controller } = open({ previews: true }, 5);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const eventId = newId("sevt");
    evidence.publish(fx.session.id, { kind: "preview_start", eventId, preview: "text" });
    // The start is queued for the consumer; what piles up behind it counts toward the bound too.
    await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 50; i++) {
      evidence.publish(fx.session.id, { kind: "preview_delta", eventId, index: 0, text: `${i} ` });
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(signals.listeners).toBe(0);
    expect(evidence.listeners).toBe(0);
    expect(await take(iterator, 1)).toEqual([
      { kind: "preview", evidence: { kind: "preview_start", eventId, preview: "text" } },
    ]);
    await expect(iterator.next()).rejects.toBeInstanceOf(TailOverflowError);
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    controller.abort();
  });

  it("a failed read ends the iteration with that error", async () => {
    const failing = new StoreSessionTail({
      history: { ...history(), threadVersion: () => Promise.reject(new Error("database is gone")) },
      signals,
      evidence,
      pollMs: 10_000,
    });
    let positioned = 0;
    const iterator = failing
      .open(fx.session, { signal: new AbortController().signal, onPositioned: () => positioned++ })
      [Symbol.asyncIterator]();
    await expect(iterator.next()).rejects.toThrow("database is gone");
    expect(signals.listeners).toBe(0);
    // The opener is told even so, so a stream answers (and then ends) instead of hanging.
    expect(positioned).toBe(1);
  });
});

/** Real in-process signals that count live subscriptions. */
class CountingSignals extends InProcessWakeSignals implements WakeSignals {
  listeners = 0;

  override onThreadCommitted(threadId: string, listener: (version: number) => void): () => void {
    const off = super.onThreadCommitted(threadId, listener);
    this.listeners += 1;
    let active = true;
    return () => {
      if (active) this.listeners -= 1;
      active = false;
      off();
    };
  }
}

class CountingEvidence extends InProcessLiveEvidenceBus implements LiveEvidenceBus {
  listeners = 0;

  override subscribe(sessionId: string, listener: (evidence: LiveEvidence) => void): () => void {
    const off = super.subscribe(sessionId, listener);
    this.listeners += 1;
    let active = true;
    return () => {
      if (active) this.listeners -= 1;
      active = false;
      off();
    };
  }
}
