/** How the push deliverer paces itself. Tests shorten these; operators keep the defaults. */
export interface PushPacing {
  /** The shortest wait between two rounds: rounds that keep finding work come this often. */
  pollMs: number;
  /**
   * The longest an idle deliverer sleeps: how soon it notices what no signal announces here (a
   * lease whose holder died, a config set on another replica whose process went away).
   */
  idlePollMs: number;
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
  idlePollMs: 5_000,
  retryBaseMs: 1_000,
  retryMaxMs: 60_000,
  maxAttempts: 10,
  requestTimeoutMs: 10_000,
};
