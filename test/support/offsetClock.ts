import type { Clock } from "../../src/kernel/clock.js";

/**
 * Real time plus an offset a test moves forward: a running server on it sees a lease lapse, a rate
 * limit pass or a token expire at once. Its timers run in real time too, and `advance` fires at
 * once those it made due, as if that much time had passed.
 */
export class OffsetClock implements Clock {
  private offset = 0;
  private readonly timers = new Map<number, { at: number; run: () => void; real: NodeJS.Timeout }>();
  private nextId = 1;

  now(): number {
    return Date.now() + this.offset;
  }

  setTimer(run: () => void, ms: number): unknown {
    const id = this.nextId++;
    const fire = () => {
      this.timers.delete(id);
      run();
    };
    this.timers.set(id, { at: this.now() + ms, run: fire, real: setTimeout(fire, ms) });
    return id;
  }

  clearTimer(timer: unknown): void {
    const entry = this.timers.get(timer as number);
    if (!entry) return;
    clearTimeout(entry.real);
    this.timers.delete(timer as number);
  }

  advance(ms: number): void {
    this.offset += ms;
    const now = this.now();
    const due = [...this.timers.entries()].filter(([, t]) => t.at <= now).sort((a, b) => a[1].at - b[1].at);
    for (const [id, timer] of due) {
      if (!this.timers.has(id)) continue; // cleared by one that ran before it
      clearTimeout(timer.real);
      timer.run();
    }
  }
}
