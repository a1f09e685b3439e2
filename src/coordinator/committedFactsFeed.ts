import { EventEmitter } from "node:events";
import type { CommittedBatch, CommittedFactsFeed } from "./ports.js";

/**
 * Fan-out of just-committed facts to the live tails of one process, keyed by thread. Nothing is
 * buffered: a tail that was not listening reads the rows from the store as it always could.
 */
export class InProcessCommittedFactsFeed implements CommittedFactsFeed {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(batch: CommittedBatch): void {
    if (batch.facts.length > 0) this.emitter.emit(batch.threadId, batch);
  }

  subscribe(threadId: string, listener: (batch: CommittedBatch) => void): () => void {
    this.emitter.on(threadId, listener);
    return () => this.emitter.off(threadId, listener);
  }
}
