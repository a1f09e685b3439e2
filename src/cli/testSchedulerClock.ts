import { type Clock, systemClock } from "../kernel/clock.js";

/**
 * TEST ONLY: `AWAKEN_TEST_SCHEDULER_CLOCK=<realOriginMs>:<clockOriginMs>:<rate>` runs the
 * deployment scheduler's clock (and only its) `rate` times faster than real time from a chosen
 * origin, so a test sees several one-minute cron instants pass in seconds across several server
 * processes that agree on the same time. Never a request field; unset in production, where the
 * scheduler uses the server's clock. A malformed value stops start-up.
 */
export function testSchedulerClock(env: NodeJS.ProcessEnv, fallback: Clock): Clock {
  const raw = env.AWAKEN_TEST_SCHEDULER_CLOCK;
  if (!raw) return fallback;
  const match = /^(\d{1,15}):(\d{1,15}):(\d{1,4})$/.exec(raw);
  if (!match) throw new Error("AWAKEN_TEST_SCHEDULER_CLOCK must be <realOriginMs>:<clockOriginMs>:<rate>");
  const [realOrigin, clockOrigin, rate] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return { now: () => clockOrigin + Math.floor((systemClock.now() - realOrigin) * rate) };
}
