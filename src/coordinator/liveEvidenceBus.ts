import { EventEmitter } from "node:events";
import type { LiveEvidence, LiveEvidenceBus } from "./ports.js";

/**
 * Fan-out of streaming previews to the live streams of one process. Nothing is buffered: a
 * stream that was not listening simply never sees a preview, and loses nothing, because the
 * committed fact that follows is the authority.
 */
export class InProcessLiveEvidenceBus implements LiveEvidenceBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  publish(sessionId: string, evidence: LiveEvidence): void {
    this.emitter.emit(sessionId, evidence);
  }

  subscribe(sessionId: string, listener: (evidence: LiveEvidence) => void): () => void {
    this.emitter.on(sessionId, listener);
    return () => this.emitter.off(sessionId, listener);
  }
}
