import type { HistoryReader, SessionRecord } from "../../../coordinator/ports.js";
import { type SessionTail, TailOverflowError } from "../../../coordinator/sessionTail.js";
import { ManagedFrames } from "../sessionStream.js";
import { wireResult } from "./wireValues.js";

/** What `events.stream()` resolves to (the SDK's `Stream` has the same members). */
export interface SessionEventStream<T> extends AsyncIterable<T> {
  readonly controller: AbortController;
}

/**
 * A session's live stream in process, as the SDK's `Stream`: `for await` yields the same event
 * objects the SSE stream carries (pings aside), `controller.abort()` (or leaving the loop) closes
 * it. Only what commits after `stream()` resolved is yielded, as over HTTP once the headers came.
 */
export class InProcessEventStream<T> implements SessionEventStream<T> {
  readonly controller = new AbortController();
  private consumed = false;
  private readonly items: AsyncIterable<T>;

  private constructor(items: (signal: AbortSignal) => AsyncIterable<T>) {
    this.items = items(this.controller.signal);
  }

  static async open<T>(
    tail: SessionTail,
    history: HistoryReader,
    session: SessionRecord,
    deltaTypes: ReadonlySet<string>,
    /** The thread's version read with the session, if it was. */
    readVersion?: number,
  ): Promise<InProcessEventStream<T>> {
    // The start position is read before the caller gets the stream: a send made right after
    // `stream()` resolves is always seen (the tail's own start read would race it).
    // Read with the session, it needs no read of the tail's either (nothing to replay).
    const start =
      readVersion !== undefined
        ? { fromVersion: readVersion }
        : { afterSeq: await history.threadVersion(session.threadId) };
    const frames = new ManagedFrames(deltaTypes);
    return new InProcessEventStream<T>((signal) => {
      // Opened now, as an HTTP stream is once its headers came: what the caller's next send
      // commits reaches the tail as it commits, not by a read when iteration starts. Until the
      // caller iterates, it holds at most a page of facts (and ends if previews overflow).
      const items = tail.open(session, { ...start, previews: deltaTypes.size > 0, signal });
      return (async function* () {
        try {
          for await (const item of items) {
            const frame = frames.frame(item);
            if (frame) yield wireResult<T>(frame.data);
          }
        } catch (error) {
          // The SSE stream ends on overflow too; the client reconnects (over HTTP it sees an end).
          if (!(error instanceof TailOverflowError)) throw error;
        }
      })();
    });
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    if (this.consumed)
      throw new Error("Cannot iterate over a consumed stream, open another with `events.stream()`.");
    this.consumed = true;
    try {
      yield* this.items;
    } finally {
      this.controller.abort();
    }
  }
}
