/** Time source passed into stores and loops so tests and property checks can drive leases. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

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

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
