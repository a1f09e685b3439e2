import { EventEmitter } from "node:events";
import type { InputOutcome, WakeSignals } from "./ports.js";

/** One wake signal, as data (a PostgreSQL commit carries the NOTIFY of the signals it will cause). */
export type WakeSignal =
  | { kind: "thread"; thread: string; version: number }
  | { kind: "dispatch"; run?: string }
  | { kind: "cancel"; run: string };

/**
 * The signals an input append sends once committed, in the order sent: workers first (the run is
 * the latency that matters), stream readers right after.
 */
export function inputOutcomeSignals(outcome: InputOutcome): WakeSignal[] {
  const signals: WakeSignal[] = [];
  for (const effect of outcome.plan.effects) {
    if (effect.kind === "start" && effect.runId !== outcome.handedOff)
      signals.push({ kind: "dispatch", run: effect.runId });
    if (
      effect.kind === "resume" &&
      (outcome.activeRunId === null || outcome.activeRunId !== outcome.handedOff)
    )
      signals.push(
        outcome.activeRunId ? { kind: "dispatch", run: outcome.activeRunId } : { kind: "dispatch" },
      );
    if (effect.kind === "cancel" && outcome.activeRunId)
      signals.push({ kind: "cancel", run: outcome.activeRunId });
  }
  // A child thread's run is resumed or cancelled by the input too (an answer routed to it, an interrupt).
  for (const child of outcome.threads ?? []) {
    if (child.activeRunId === null) continue;
    for (const effect of child.effects) {
      if (effect.kind === "resume") signals.push({ kind: "dispatch", run: child.activeRunId });
      if (effect.kind === "cancel") signals.push({ kind: "cancel", run: child.activeRunId });
    }
  }
  const last = outcome.committed[outcome.committed.length - 1];
  if (last) signals.push({ kind: "thread", thread: last.threadId, version: last.seq });
  for (const child of outcome.threads ?? []) {
    const end = child.committed[child.committed.length - 1];
    if (end) signals.push({ kind: "thread", thread: end.threadId, version: end.seq });
  }
  return signals;
}

/** Sends one signal through the port. */
export function sendWakeSignal(signals: WakeSignals, signal: WakeSignal): void {
  if (signal.kind === "thread") signals.threadCommitted(signal.thread, signal.version);
  else if (signal.kind === "dispatch") signals.dispatchReady(signal.run);
  else signals.runCancelled(signal.run);
}

/** In-process wake signals for the all-in-one server. PostgreSQL NOTIFY implements the same port. */
export class InProcessWakeSignals implements WakeSignals {
  private readonly emitter = new EventEmitter();

  constructor() {
    // Every open SSE stream listens on its thread; thousands of streams are normal.
    this.emitter.setMaxListeners(0);
  }

  threadCommitted(threadId: string, version: number): void {
    this.emitter.emit(`thread:${threadId}`, version);
    this.emitter.emit("thread", threadId);
  }

  onAnyThreadCommitted(listener: (threadId: string) => void): () => void {
    this.emitter.on("thread", listener);
    return () => this.emitter.off("thread", listener);
  }

  onThreadCommitted(threadId: string, listener: (version: number) => void): () => void {
    this.emitter.on(`thread:${threadId}`, listener);
    return () => this.emitter.off(`thread:${threadId}`, listener);
  }

  dispatchReady(runId?: string): void {
    this.emitter.emit("dispatch", runId ?? null);
  }

  onDispatchReady(listener: (runId: string | null) => void): () => void {
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
