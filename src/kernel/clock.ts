/**
 * Time source passed into stores and loops so tests and property checks can drive leases. A clock
 * may also keep its own timers: waits measured against `now` (a rate limit, a long-poll's deadline)
 * then run on the same time, so a test that advances the clock fires them without sleeping.
 * Without them, timers are real (`setTimeout`).
 */
export interface Clock {
  now(): number;
  setTimer?(run: () => void, ms: number): unknown;
  clearTimer?(timer: unknown): void;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Runs `run` after `ms` on `clock`'s timers (real ones unless it keeps its own). `unref`: a real
 * timer does not keep the process alive (a per-response check, not work the process owes).
 */
export function setTimer(
  clock: Clock,
  run: () => void,
  ms: number,
  options: { unref?: boolean } = {},
): unknown {
  if (clock.setTimer) return clock.setTimer(run, ms);
  const timer = setTimeout(run, ms);
  if (options.unref) timer.unref();
  return timer;
}

export function clearTimer(clock: Clock, timer: unknown): void {
  if (timer === undefined) return;
  if (clock.clearTimer) clock.clearTimer(timer);
  else clearTimeout(timer as NodeJS.Timeout);
}

// The last conversion, kept: the facts of one commit share their timestamp, so a streamed or
// listed page formats the same millisecond many times over.
let lastMs = Number.NaN;
let lastIso = "";

export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** Resolves after `ms` on `clock` (real time by default), or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal, clock: Clock = systemClock): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimer(clock, done, ms);
    function done() {
      clearTimer(clock, timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
