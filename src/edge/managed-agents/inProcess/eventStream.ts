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

  private constructor(private readonly items: AsyncIterable<T>) {}

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
    const holder: { stream?: InProcessEventStream<T> } = {};
    const frames = new ManagedFrames(deltaTypes);
    const stream = new InProcessEventStream<T>(
      (async function* () {
        const signal = (holder.stream as InProcessEventStream<T>).controller.signal;
        const items = tail.open(session, { ...start, previews: deltaTypes.size > 0, signal });
        try {
          for await (const item of items) {
            const frame = frames.frame(item);
            if (frame) yield wireResult<T>(frame.data);
          }
        } catch (error) {
          // The SSE stream ends on overflow too; the client reconnects (over HTTP it sees an end).
          if (!(error instanceof TailOverflowError)) throw error;
        }
      })(),
    );
    holder.stream = stream;
    return stream;
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
