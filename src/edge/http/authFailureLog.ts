import type { FastifyBaseLogger } from "fastify";

/** One warn line per source address per window; the next line counts what the window held back. */
export const AUTH_FAILURE_LOG_WINDOW_MS = 60_000;
/** Sources remembered at once: a flood from many addresses costs bounded memory (oldest dropped). */
const MAX_SOURCES = 10_000;

interface SourceWindow {
  startedAt: number;
  suppressed: number;
}

/**
 * Failed authentications at warn, rate-limited per source address so a credential-guessing client
 * cannot flood the log: what it tried is never logged (no key, token or header), only where from,
 * the route and the request id.
 */
export class AuthFailureLog {
  private readonly sources = new Map<string, SourceWindow>();

  constructor(private readonly now: () => number = Date.now) {}

  record(log: FastifyBaseLogger, source: string, fields: { route: string; method: string }): void {
    const at = this.now();
    const window = this.sources.get(source);
    if (window && at - window.startedAt < AUTH_FAILURE_LOG_WINDOW_MS) {
      window.suppressed++;
      return;
    }
    const suppressed = window?.suppressed ?? 0;
    this.sources.delete(source);
    if (this.sources.size >= MAX_SOURCES) {
      const oldest = this.sources.keys().next().value;
      if (oldest !== undefined) this.sources.delete(oldest);
    }
    this.sources.set(source, { startedAt: at, suppressed: 0 });
    log.warn(
      { source, ...fields, ...(suppressed > 0 ? { suppressedSinceLastLine: suppressed } : {}) },
      "authentication failed",
    );
  }
}
