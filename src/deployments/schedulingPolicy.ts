import { createHash } from "node:crypto";

/**
 * How the scheduler paces itself (docs/operations.md, "Scheduling"): how often a replica looks for
 * due instants, the per-schedule jitter a fire is offset by, the per-workspace cap on scheduled
 * triggers per minute, and when an unsettled claim is presumed abandoned by a stopped replica.
 */
export interface SchedulingPolicy {
  /** How often each replica looks for due instants. */
  tickMs: number;
  /** A fire starts at its instant plus 0..jitterMaxMs, fixed per deployment (spreads load on :00). */
  jitterMaxMs: number;
  /** Scheduled triggers one workspace may claim per clock minute; past it a run fails rate-limited. 0: no cap. */
  triggersPerMinute: number;
  /** A claim not settled after this long is settled by another replica (its own replica stopped). */
  staleClaimMs: number;
}

export const DEFAULT_SCHEDULING_POLICY: SchedulingPolicy = {
  tickMs: 1_000,
  jitterMaxMs: 10_000,
  triggersPerMinute: 60,
  // Past the session entry's name-reservation takeover (10 min): a settle never waits on a live creator.
  staleClaimMs: 11 * 60_000,
};

/** The deployment's fixed offset in [0, maxMs]: the same on every replica, from its id. */
export function jitterOf(deploymentId: string, maxMs: number): number {
  if (maxMs <= 0) return 0;
  const n = createHash("sha256").update(deploymentId).digest().readUInt32BE(0);
  return n % (maxMs + 1);
}

function nonNegativeInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d{1,12}$/.test(raw))
    throw new Error(`${name} must be a non-negative integer (got ${JSON.stringify(raw)})`);
  return Number(raw);
}

/** The operator's settings (AWAKEN_SCHEDULER_*); a malformed value stops start-up. */
export function schedulingPolicyFromEnv(env: NodeJS.ProcessEnv): SchedulingPolicy {
  const tickMs = nonNegativeInt(env, "AWAKEN_SCHEDULER_TICK_MS", DEFAULT_SCHEDULING_POLICY.tickMs);
  return {
    tickMs: Math.max(50, tickMs),
    jitterMaxMs: nonNegativeInt(env, "AWAKEN_SCHEDULER_JITTER_MS", DEFAULT_SCHEDULING_POLICY.jitterMaxMs),
    triggersPerMinute: nonNegativeInt(
      env,
      "AWAKEN_SCHEDULER_TRIGGERS_PER_MINUTE",
      DEFAULT_SCHEDULING_POLICY.triggersPerMinute,
    ),
    staleClaimMs: nonNegativeInt(
      env,
      "AWAKEN_SCHEDULER_STALE_CLAIM_MS",
      DEFAULT_SCHEDULING_POLICY.staleClaimMs,
    ),
  };
}
