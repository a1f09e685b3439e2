import type { Clock } from "../../src/kernel/clock.js";

/**
 * A manual clock that keeps its own timers: `advance` moves time and fires every timer that fell
 * due, in order, letting the promises each one settles run before the next. Waits measured
 * against the clock (rate limits, long-poll deadlines) then pass without a real sleep.
 */
export class SteppedClock implements Clock {
  private timers: Array<{ at: number; run: () => void; id: number }> = [];
  private nextId = 0;

  constructor(public ms = 1_800_000_000_000) {}

  now(): number {
    return this.ms;
  }

  setTimer(run: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.ms + Math.max(0, ms), run, id });
    return id;
  }

  clearTimer(timer: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== timer);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  async advance(ms: number): Promise<void> {
    const until = this.ms + ms;
    for (;;) {
      await flush();
      const due = this.timers.filter((t) => t.at <= until).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.ms = Math.max(this.ms, due.at);
      due.run();
    }
    this.ms = until;
    await flush();
  }
}

/** Lets every settled promise's continuations run (a macrotask turn). */
function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
