/** How the push deliverer paces itself. Tests shorten these; operators keep the defaults. */
export interface PushPacing {
  /** How often the deliverer looks for new committed facts and due rows. */
  pollMs: number;
  /** Backoff after a failed attempt: base, doubled each attempt, capped. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** Attempts before a row is abandoned (counted as such in the metrics). */
  maxAttempts: number;
  /** One POST's time limit; a claim's lease outlasts it. */
  requestTimeoutMs: number;
}

export const DEFAULT_PUSH_PACING: PushPacing = {
  pollMs: 250,
  retryBaseMs: 1_000,
  retryMaxMs: 60_000,
  maxAttempts: 10,
  requestTimeoutMs: 10_000,
};
