import { PlatformError } from "../kernel/errors.js";
import type { CommittedFact } from "./facts.js";
import type { LiveEvidence } from "./ports.js";

/**
 * What a session's tail yields, in order: committed facts (the truth) and, when asked for, the
 * live previews that precede them (evidence only; a preview never outlives its committed fact).
 */
export type TailItem = { kind: "fact"; fact: CommittedFact } | { kind: "preview"; evidence: LiveEvidence };

export interface TailOpenOptions {
  /** Replay committed facts with `seq > afterSeq` first; absent: only what commits after opening. */
  afterSeq?: number;
  /**
   * Without `afterSeq`: the thread's version the caller read with the session, where the tail
   * starts instead of reading the version itself (nothing is replayed). A fact committed between
   * that read and the open is delivered with the next commit's signal or poll.
   */
  fromVersion?: number;
  /** Also yield live previews (text, thinking and tool-input deltas). */
  previews?: boolean;
  /** Ends the iteration (the client went away). */
  signal: AbortSignal;
  /**
   * Called once when the start position is fixed: every fact committed from then on is yielded.
   * Without `afterSeq` that takes a read of the thread's version, so a stream that promises "what
   * commits after you connected" answers its client only from here. Also called if the tail ends
   * before (aborted, or the read failed: the iteration then ends or rejects as usual).
   */
  onPositioned?: () => void;
}

/**
 * The one live view of a session every edge formats: subscribe before read, yield committed rows
 * only (read from the store, or handed over by a committer of this process after its commit
 * returned; never a private buffer of output), keep previews and facts in commit order. The iteration
 * ends after the session is terminated or deleted, or when the signal aborts; it fails with
 * `TailOverflowError` when the consumer stops pulling while previews keep arriving.
 */
export interface SessionTail {
  open(session: { id: string; threadId: string }, options: TailOpenOptions): AsyncIterable<TailItem>;
}

/** The tail ended because its consumer fell too far behind; a client reconnects with `afterSeq`. */
export class TailOverflowError extends PlatformError {
  constructor(limit: number) {
    super("tail_overflow", `the session stream fell more than ${limit} items behind; reconnect to resume`, {
      retryable: true,
    });
    this.name = "TailOverflowError";
  }
}
