import { EventEmitter } from "node:events";
import type { WakeSignals } from "./ports.js";

/** In-process wake signals for the all-in-one server. PostgreSQL NOTIFY implements the same port. */
export class InProcessWakeSignals implements WakeSignals {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every open SSE stream listens on its thread; thousands of streams are normal.
    this.emitter.setMaxListeners(0);
  }

  threadCommitted(threadId: string, version: number): void {
    this.emitter.emit(`thread:${threadId}`, version);
  }

  onThreadCommitted(threadId: string, listener: (version: number) => void): () => void {
    this.emitter.on(`thread:${threadId}`, listener);
    return () => this.emitter.off(`thread:${threadId}`, listener);
  }

  dispatchReady(): void {
    this.emitter.emit("dispatch");
  }

  onDispatchReady(listener: () => void): () => void {
    this.emitter.on("dispatch", listener);
    return () => this.emitter.off("dispatch", listener);
  }

  runCancelled(runId: string): void {
    this.emitter.emit("cancel", runId);
  }

  onRunCancelled(listener: (runId: string) => void): () => void {
    this.emitter.on("cancel", listener);
    return () => this.emitter.off("cancel", listener);
  }
}
