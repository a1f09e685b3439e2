import { BoundedCache } from "../kernel/boundedCache.js";
import { storedTypesOf } from "./factCodec.js";
import type { CommittedFact } from "./facts.js";
import type {
  CommittedBatch,
  CommittedFactsFeed,
  HistoryReader,
  LiveEvidence,
  LiveEvidenceBus,
  WakeSignals,
} from "./ports.js";
import { type SessionTail, type TailItem, type TailOpenOptions, TailOverflowError } from "./sessionTail.js";

export interface StoreSessionTailDeps {
  history: HistoryReader;
  signals: WakeSignals;
  evidence: LiveEvidenceBus;
  /** Facts this process committed, taken without a read when they continue the cursor exactly. */
  committed?: CommittedFactsFeed;
  /** Safety net when a wake signal is missed; committed rows are the source either way. */
  pollMs: number;
  /** Previews a consumer may fall behind by before the iteration ends with `TailOverflowError`. */
  maxQueued?: number;
}

export const DEFAULT_MAX_QUEUED = 10_000;
const PAGE = 500;
/** Stored types of the facts that end a tail; both decode from their type alone, so no decode is needed. */
const CLOSING_TYPES: ReadonlySet<string> = new Set(storedTypesOf("session_deleted", "status_terminated"));
/** Fact ids remembered so a preview that arrives after its fact (a poll read ahead) is dropped. */
const RECENT_FACT_IDS = 1_000;

/** The tail over the store: `SessionTail`'s one implementation (see the contract for its rules). */
export class StoreSessionTail implements SessionTail {
  constructor(private readonly deps: StoreSessionTailDeps) {}

  open(session: { id: string; threadId: string }, options: TailOpenOptions): AsyncIterableIterator<TailItem> {
    return new TailRun(this.deps, session, options);
  }
}

type Pull = { resolve: (result: IteratorResult<TailItem>) => void; reject: (error: unknown) => void };

/**
 * One open tail. Every read and every preview runs through one promise chain, which is what keeps
 * them in commit order. Facts are read from the store only when the consumer has room (a slow
 * reader lags, it never buffers history); previews cannot wait, so they are what the bound counts.
 */
class TailRun implements AsyncIterableIterator<TailItem> {
  private cursor: number | null = null;
  private chain: Promise<void> = Promise.resolve();
  /** The last task in the chain while it is a pump that has not started: later pumps merge into it. */
  private pendingPump: { upTo: number | undefined } | null = null;
  private pendingEvidence = 0;
  private readonly queue: TailItem[] = [];
  private readonly pulls: Pull[] = [];
  private roomWaiter: (() => void) | null = null;
  private state: "open" | "ended" | "failed" = "open";
  private failure: unknown;
  /** Previews started and not yet ended by their fact or an abandon. */
  private readonly previews = new Set<string>();
  private readonly recentFacts = new BoundedCache<string, true>({ maxEntries: RECENT_FACT_IDS });
  private readonly cleanups: Array<() => void> = [];
  private readonly maxQueued: number;
  private onPositioned: (() => void) | undefined;

  constructor(
    private readonly deps: StoreSessionTailDeps,
    private readonly session: { id: string; threadId: string },
    options: TailOpenOptions,
  ) {
    this.maxQueued = deps.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.onPositioned = options.onPositioned;
    if (options.signal.aborted) {
      this.state = "ended";
      this.positioned();
      return;
    }
    const onAbort = () => this.stop();
    options.signal.addEventListener("abort", onAbort, { once: true });
    this.cleanups.push(() => options.signal.removeEventListener("abort", onAbort));
    // Subscribe before reading the start position so nothing committed in between is missed.
    this.cleanups.push(deps.signals.onThreadCommitted(session.threadId, (version) => this.pump(version)));
    if (deps.committed) {
      this.cleanups.push(deps.committed.subscribe(session.threadId, (batch) => this.onCommitted(batch)));
    }
    if (options.previews) {
      this.cleanups.push(deps.evidence.subscribe(session.id, (evidence) => this.onEvidence(evidence)));
    }
    const poll = setInterval(() => this.pump(), deps.pollMs);
    this.cleanups.push(() => clearInterval(poll));
    const { afterSeq, fromVersion } = options;
    if (afterSeq !== undefined) {
      this.cursor = afterSeq;
      this.positioned();
      this.pump();
    } else if (fromVersion !== undefined) {
      this.cursor = fromVersion;
      this.positioned();
    } else {
      this.enqueue(async () => {
        this.cursor = await deps.history.threadVersion(session.threadId);
        this.positioned();
      });
    }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<TailItem> {
    return this;
  }

  next(): Promise<IteratorResult<TailItem>> {
    const item = this.queue.shift();
    if (item) {
      this.releaseRoom();
      return Promise.resolve({ value: item, done: false });
    }
    if (this.state === "failed") {
      this.state = "ended";
      return Promise.reject(this.failure);
    }
    if (this.state === "ended") return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => this.pulls.push({ resolve, reject }));
  }

  return(): Promise<IteratorResult<TailItem>> {
    this.stop();
    return Promise.resolve({ value: undefined, done: true });
  }

  // `upTo` is the version a commit signal announced: reading no further keeps facts committed
  // later (during this async read) behind the previews that were published before them.
  private pump(upTo?: number): void {
    if (this.state !== "open") return;
    const pending = this.pendingPump;
    if (pending) {
      pending.upTo =
        pending.upTo === undefined || upTo === undefined ? undefined : Math.max(pending.upTo, upTo);
      return;
    }
    const request = { upTo };
    this.enqueue(async () => {
      if (this.pendingPump === request) this.pendingPump = null;
      await this.readPage(request.upTo);
    });
    this.pendingPump = request;
  }

  private async readPage(upTo: number | undefined): Promise<void> {
    await this.room();
    if (this.state !== "open" || this.cursor === null) return;
    const limit = upTo === undefined ? PAGE : Math.min(PAGE, upTo - this.cursor);
    if (limit <= 0) return;
    const facts = await this.deps.history.readThread(this.session.threadId, this.cursor, limit);
    for (const fact of facts) {
      if (!this.take(fact)) return;
    }
    if (facts.length === limit && (upTo === undefined || this.cursor < upTo)) this.pump(upTo);
  }

  /** Yields the fact at `cursor + 1`; false when the tail is over (closed before or by this fact). */
  private take(fact: CommittedFact): boolean {
    if (this.state !== "open") return false;
    this.cursor = fact.seq;
    this.previews.delete(fact.id);
    this.remember(fact);
    this.push({ kind: "fact", fact });
    if (CLOSING_TYPES.has(fact.type)) {
      this.finish();
      return false;
    }
    return true;
  }

  // In the chain like previews, so a batch lands after the previews published before its commit.
  private onCommitted(batch: CommittedBatch): void {
    if (this.state !== "open") return;
    this.enqueue(() => this.applyCommitted(batch));
  }

  /**
   * Takes the batch's facts past the cursor when they continue it exactly. A gap (a commit this
   * process did not make or did not see), or a consumer a page behind, reads the store instead.
   */
  private applyCommitted(batch: CommittedBatch): void {
    if (this.cursor === null || batch.versionAfter <= this.cursor) return;
    const first = batch.versionAfter - batch.facts.length + 1;
    if (first > this.cursor + 1 || this.queue.length >= PAGE) {
      this.pump(batch.versionAfter);
      return;
    }
    for (let seq = this.cursor + 1; seq <= batch.versionAfter; seq++) {
      const fact = batch.facts[seq - first];
      if (!fact) return;
      const committed: CommittedFact = {
        id: fact.id,
        type: fact.type,
        body: fact.body,
        sessionId: this.session.id,
        threadId: batch.threadId,
        seq,
        createdAt: batch.committedAt,
      };
      if (!this.take(committed)) return;
    }
  }

  private onEvidence(evidence: LiveEvidence): void {
    if (this.state !== "open") return;
    if (this.pendingEvidence + this.queue.length >= this.maxQueued) {
      this.fail(new TailOverflowError(this.maxQueued));
      return;
    }
    this.pendingEvidence += 1;
    this.enqueue(() => {
      this.pendingEvidence -= 1;
      this.applyEvidence(evidence);
    });
  }

  private applyEvidence(evidence: LiveEvidence): void {
    const id = evidence.eventId;
    if (evidence.kind === "preview_start") {
      // A preview whose fact already went out would never be ended: drop it.
      if (this.previews.has(id) || this.recentFacts.has(id)) return;
      this.previews.add(id);
    } else if (evidence.kind === "preview_delta") {
      if (!this.previews.has(id)) return;
    } else if (!this.previews.delete(id)) {
      return;
    }
    this.push({ kind: "preview", evidence });
  }

  private enqueue(task: () => Promise<void> | void): void {
    // Anything enqueued after a pending pump must stay after the facts that pump reads.
    this.pendingPump = null;
    this.chain = this.chain
      .then(() => (this.state === "open" ? task() : undefined))
      .catch((error: unknown) => this.fail(error));
  }

  private push(item: TailItem): void {
    this.queue.push(item);
    this.deliver();
  }

  private remember(fact: CommittedFact): void {
    this.recentFacts.add(fact.id, true);
  }

  /** Resolves once fewer than a page of items wait for the consumer (or the tail ended). */
  private room(): Promise<void> {
    if (this.queue.length < PAGE || this.state !== "open") return Promise.resolve();
    return new Promise((resolve) => {
      this.roomWaiter = resolve;
    });
  }

  private releaseRoom(): void {
    if (this.roomWaiter && (this.queue.length < PAGE || this.state !== "open")) {
      const resolve = this.roomWaiter;
      this.roomWaiter = null;
      resolve();
    }
  }

  private deliver(): void {
    while (this.pulls.length > 0) {
      const item = this.queue.shift();
      if (item) {
        this.pulls.shift()?.resolve({ value: item, done: false });
        continue;
      }
      if (this.state === "open") return;
      const pull = this.pulls.shift();
      if (this.state === "failed") {
        this.state = "ended";
        pull?.reject(this.failure);
      } else {
        pull?.resolve({ value: undefined, done: true });
      }
    }
  }

  /** After the closing fact: what is queued is still delivered, then the iteration is done. */
  private finish(): void {
    if (this.state !== "open") return;
    this.state = "ended";
    this.cleanup();
  }

  /** A failed read or an overflow: what is queued is delivered, then `next()` rejects once. */
  private fail(error: unknown): void {
    if (this.state !== "open") return;
    this.state = "failed";
    this.failure = error;
    this.cleanup();
  }

  /** The consumer went away (abort or `return()`): nothing more is delivered. */
  private stop(): void {
    this.queue.length = 0;
    if (this.state === "failed") this.failure = undefined;
    this.state = "ended";
    this.cleanup();
  }

  /** Tells the opener, once, that the start position is fixed (or that the tail ended first). */
  private positioned(): void {
    const callback = this.onPositioned;
    this.onPositioned = undefined;
    callback?.();
  }

  private cleanup(): void {
    this.positioned();
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.releaseRoom();
    this.deliver();
  }
}
