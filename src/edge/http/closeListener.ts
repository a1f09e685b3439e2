import type { ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";

/** Hooks whose failure was logged already: a broken hook fails every request, one line says so. */
const reported = new Set<string>();

/** A response being answered and the log its request writes to (a `FastifyReply` is one). */
export interface ClosingResponse {
  raw: ServerResponse;
  log: FastifyBaseLogger;
}

/**
 * `listener`, made safe to run outside any request handler: on a response's `close`, or on one
 * of the request's abort signals. What it throws there would reach the event loop and end the
 * process with every tenant's requests (an `AbortSignal` reports its listeners' errors as uncaught,
 * `abort()` never throws them). Here it costs that one request, logged once per hook with no
 * request content.
 */
export function guardedListener<Args extends unknown[]>(
  hook: string,
  log: FastifyBaseLogger,
  listener: (...args: Args) => void,
): (...args: Args) => void {
  return (...args) => {
    try {
      listener(...args);
    } catch (error) {
      if (reported.has(hook)) return;
      reported.add(hook);
      // The error's kind only: its message may quote label values or request text.
      const kind = error instanceof Error ? error.name : typeof error;
      log.error({ hook, error: kind }, "a request close hook failed; later failures of it are not logged");
    }
  };
}

/**
 * Runs `listener` once the response's connection closes (answered, aborted or a stream ended): the
 * one way edge code watches a request end, so every such listener is guarded. A client that hung up
 * while the request was still being authenticated or read has closed it already: `close` will not
 * fire again, so the listener runs on the next tick instead of never (a stream's timers and slot
 * would otherwise be held forever).
 */
export function onReplyClosed(reply: ClosingResponse, hook: string, listener: () => void): void {
  const guarded = guardedListener(hook, reply.log, listener);
  if (reply.raw.destroyed) process.nextTick(guarded);
  else reply.raw.once("close", guarded);
}
