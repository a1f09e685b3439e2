import type { FastifyReply, FastifyRequest } from "fastify";
import type { Clock } from "../../kernel/clock.js";
import { openRpcStream } from "./rpcStream.js";

export interface SseAnswerOptions {
  pingMs: number;
  /** The clock the keep-alives run on. */
  clock: Clock;
  closed: AbortController;
  /** A stream event as the binding writes it. */
  encode(event: unknown): unknown;
  /** The plain (non-stream) answer when the stream fails or refuses before its first event. */
  refuse(reply: FastifyReply, errorOrEnvelope: unknown): void;
  /** A failure after the first event: the stream's last SSE event. */
  failure(error: unknown): { event?: string; data: unknown };
  /** A first event that is itself a refusal (JSON-RPC's transport yields error envelopes). */
  isRefusal?(first: unknown): boolean;
}

/**
 * A streaming method's answer. A failure before its first event (an unknown task, a refused
 * message) is a plain error answer; from the first event on it is an SSE stream, which ends when
 * the task comes to rest. The client going away stops the reading, not the task.
 */
export async function answerWithSse(
  request: FastifyRequest,
  reply: FastifyReply,
  events: AsyncGenerator<unknown, void, undefined>,
  options: SseAnswerOptions,
): Promise<void> {
  const { closed } = options;
  const iterator = events[Symbol.asyncIterator]();
  let first: IteratorResult<unknown, void>;
  try {
    first = await iterator.next();
  } catch (error) {
    options.refuse(reply, error);
    return;
  }
  if (first.done || options.isRefusal?.(first.value)) {
    options.refuse(reply, first.done ? new Error("The stream had no events.") : first.value);
    await iterator.return(undefined);
    return;
  }
  const sink = openRpcStream(
    request,
    reply,
    { everyMs: options.pingMs, clock: options.clock },
    closed.signal,
  );
  try {
    await sink.write(options.encode(first.value));
    // Each write is awaited before the next pull: a client that stops reading pauses the task's tail.
    while (!closed.signal.aborted) {
      const next = await iterator.next();
      if (next.done || closed.signal.aborted) break;
      await sink.write(options.encode(next.value));
    }
  } catch (error) {
    // Mid-stream, a failure is the stream's last event (the guard already logged what was ours).
    const last = options.failure(error);
    await sink.write(last.data, last.event);
  } finally {
    await iterator.return(undefined);
    sink.end();
  }
}
