import type { ServerResponse } from "node:http";
import { type Clock, clearTimer, setTimer, systemClock } from "../../kernel/clock.js";
import { type ClosingResponse, onReplyClosed } from "./closeListener.js";

/** A frame as it goes on the wire: SSE text, or an encoder's bytes (AG-UI's protobuf framing). */
export type Frame = string | Uint8Array;

export interface SseWriterOptions {
  /** Names the stream in the log line when its close hook fails. */
  hook: string;
  /** A keep-alive frame (an SSE comment or ping event) every `everyMs`; none for framings without one. */
  heartbeat?: { frame: Frame; everyMs: number };
  /** The clock whose timers the heartbeat runs on (real timers unless it keeps its own). */
  clock?: Clock;
  /** Ends the writer's waits and heartbeat as a close would (the credential ended, the answer is over). */
  signal?: AbortSignal;
}

const READY: Promise<void> = Promise.resolve();
/** One shared abort reason: a bare `abort()` builds a DOMException with a stack for every stream that closes. */
const STREAM_CLOSED = new Error("the event stream closed");

/**
 * The one writer of every streaming edge's response, opened once its headers went out. A client that
 * stops reading stops the producer: `write` resolves only when the socket took the frame or drained
 * (or the stream closed), and the caller awaits it before pulling its next item, so a stalled client
 * costs one socket buffer and one frame, never a backlog. A heartbeat goes out only while nothing is
 * buffered (a connection with bytes pending is not idle, and a stalled one must not grow). When the
 * connection closes (or `signal` aborts), `closed` aborts, a pending `write` resolves and the
 * heartbeat stops: the producer's loop sees `closed` and returns its iterator.
 */
export class SseWriter {
  private readonly stop = new AbortController();
  private readonly raw: ServerResponse;
  private readonly clock: Clock;
  private heartbeat: unknown;
  private waiting: Promise<void> | null = null;

  constructor(response: ClosingResponse, options: SseWriterOptions) {
    this.raw = response.raw;
    this.clock = options.clock ?? systemClock;
    onReplyClosed(response, options.hook, () => this.close());
    options.signal?.addEventListener("abort", () => this.close(), { once: true });
    if (options.signal?.aborted) this.close();
    if (options.heartbeat && !this.stop.signal.aborted) this.beat(options.heartbeat);
  }

  /** Aborts when the connection closed or the writer ended: the producer stops there. */
  get closed(): AbortSignal {
    return this.stop.signal;
  }

  /**
   * Writes `frame`; the promise resolves when the next frame may go (at once unless the socket's
   * buffer is full, then on `drain`, or when the stream closes). Await it before producing more.
   */
  write(frame: Frame): Promise<void> {
    if (!this.open()) return READY;
    if (this.raw.write(frame) && this.waiting === null) return READY;
    this.waiting ??= this.drained();
    return this.waiting;
  }

  /** Writes `frame` only when nothing is buffered, for frames a slow reader may miss (hints, pings). */
  offer(frame: Frame): boolean {
    if (!this.open() || this.waiting !== null || this.raw.writableLength > 0) return false;
    this.raw.write(frame);
    return true;
  }

  /**
   * Ends the response, with `frame` as its last bytes (not waited on: nothing is produced after it),
   * also after `signal` aborted: that stops the writes, the edge still says its last word.
   */
  end(frame?: Frame): void {
    this.close();
    if (this.raw.writableEnded) return;
    // A closed connection takes no last frame; ending it still releases the response.
    if (frame === undefined || this.raw.destroyed) this.raw.end();
    else this.raw.end(frame);
  }

  private open(): boolean {
    return !this.stop.signal.aborted && !this.raw.destroyed && !this.raw.writableEnded;
  }

  /** One timer at a time, re-armed after each beat: nothing is left to clear once the writer closed. */
  private beat(heartbeat: { frame: Frame; everyMs: number }): void {
    this.heartbeat = setTimer(
      this.clock,
      () => {
        this.heartbeat = undefined;
        if (this.stop.signal.aborted) return;
        this.offer(heartbeat.frame);
        this.beat(heartbeat);
      },
      heartbeat.everyMs,
    );
  }

  private close(): void {
    clearTimer(this.clock, this.heartbeat);
    this.heartbeat = undefined;
    this.stop.abort(STREAM_CLOSED);
  }

  private drained(): Promise<void> {
    const { raw } = this;
    const signal = this.stop.signal;
    return new Promise<void>((resolve) => {
      const done = () => {
        raw.off("drain", done);
        signal.removeEventListener("abort", done);
        this.waiting = null;
        resolve();
      };
      raw.on("drain", done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
