import type { FastifyReply } from "fastify";

/** Hooks whose failure was logged already: a broken hook fails every request, one line says so. */
const reported = new Set<string>();

/**
 * Runs `listener` once the request's connection closes (answered, aborted or a stream ended), for
 * shared per-request infrastructure (metrics, tracing). A listener there runs outside any request
 * handler: what it throws would reach the event loop and end the process with every tenant's
 * requests. Here it costs that one request's record, logged once per hook with no request content.
 */
export function onReplyClosed(reply: FastifyReply, hook: string, listener: () => void): void {
  reply.raw.once("close", () => {
    try {
      listener();
    } catch (error) {
      if (reported.has(hook)) return;
      reported.add(hook);
      // The error's kind only: its message may quote label values or request text.
      const kind = error instanceof Error ? error.name : typeof error;
      reply.log.error(
        { hook, error: kind },
        "a request close hook failed; later failures of it are not logged",
      );
    }
  });
}
