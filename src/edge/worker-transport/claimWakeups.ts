import { randomBytes } from "node:crypto";
import { ClaimTracker } from "../../kernel/claimTracker.js";

/**
 * Wake-ups of the long-poll claims waiting in this process: one dispatch signal (one run became
 * claimable) wakes ONE waiting claim, the one that waited longest, as the in-process worker wakes
 * one idle slot. Waking every waiter would send them all to claim the same run, and all but one
 * would come back empty and claim again.
 *
 * Wake-ups only lower latency: a claim that is not woken claims again when its wait ends, so
 * polling alone still finishes every run. A signal is never silently lost while some claim could
 * still use it: one that arrives while no claim waits but some are mid-claim (their query may have
 * run before the run was visible) is kept for the next claim that would wait; a waiter whose client
 * hung up leaves the line at once; and a claim that gets a signal (or a run) it cannot deliver
 * hands it on with `wakeOne()`.
 */
/** A bound, not a working size: a burst of signals with nobody claiming owes at most this many looks. */
const MAX_OWED = 1_000;

export class ClaimWakeups {
  private waiters: Array<() => void> = [];
  private claiming = 0;
  /** What this process's claims found of the runs signals announced. */
  private readonly claims = new ClaimTracker();
  private pending = 0;
  /** Signals that found no claim waiting: they may be for a slot on its way back to claim. */
  private unanswered = 0;
  /** Of those, the ones no claim has started after yet: each is owed one look. */
  private owed = 0;
  /** Tells this process's cursors from another replica's (or a previous incarnation's). */
  private readonly incarnation = randomBytes(8).toString("hex");

  /**
   * Where the signals stand, to hand out with a claim's answer; a slot sends it back when it comes
   * back idle (`idleSince`), which tells this process's slots from another replica's.
   */
  cursor(): string {
    return `${this.incarnation}:${this.unanswered}`;
  }

  /**
   * True when a claim of a slot idle since `idleSince` may wait for a signal before it looks: the
   * slot is this process's, and every signal that found no claim waiting has had a claim start
   * after it (so none is left for this one), or every run announced has a claim in flight that may
   * take it. A slot of another process claims at once.
   */
  mayWaitFirst(idleSince: string | undefined): boolean {
    if (idleSince?.startsWith(`${this.incarnation}:`) !== true) return false;
    return (this.owed === 0 && this.pending === 0) || !this.claims.uncovered();
  }

  /**
   * Runs one claim attempt, counted so that a signal arriving meanwhile is kept for it. A claim
   * that was not woken (`woken` false) is the look a kept signal is owed: it takes one, so a kept
   * signal sends one idle slot to claim at once, not every slot that comes back while it is kept.
   */
  async claim<T extends { runId: string }>(
    attempt: (target: string | undefined) => Promise<T | null>,
    woken = false,
  ): Promise<T | null> {
    if (this.owed > 0) this.owed -= 1;
    if (!woken && this.pending > 0) this.pending -= 1;
    this.claiming += 1;
    try {
      return await this.claims.claim(attempt, (found) => found.runId);
    } finally {
      this.claiming -= 1;
      // It took another run than one announced (an older one, or a lapsed lease): that one is still
      // waiting for a look, and the signal that announced it was spent on this claim.
      if (this.claims.uncovered()) this.waiters[0]?.();
    }
  }

  /**
   * A dispatch signal came (`runId` null: something may be claimable). False when a claim here took
   * that run already.
   */
  announce(runId: string | null): boolean {
    return this.claims.announce(runId);
  }

  /** A run a claim here found committed or was handed back: its slice's claim is spent. */
  finished(runId: string): void {
    this.claims.finished(runId);
  }

  /** For a woken claim: false when the claims in flight took every run announced (see `ClaimTracker`). */
  worthLooking(): Promise<boolean> {
    return this.claims.worthLooking();
  }

  /**
   * Waits for a signal: resolves `true` when woken, `false` after `ms` or as soon as `cancelled`
   * aborts (the client went away), without taking a signal meant for another claim.
   */
  wait(ms: number, cancelled: AbortSignal): Promise<boolean> {
    if (cancelled.aborted) return Promise.resolve(false);
    if (this.pending > 0) {
      this.pending -= 1;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const finish = (woken: boolean) => {
        clearTimeout(timer);
        cancelled.removeEventListener("abort", leave);
        this.waiters = this.waiters.filter((w) => w !== wake);
        resolve(woken);
      };
      const wake = () => finish(true);
      const leave = () => finish(false);
      const timer = setTimeout(leave, ms);
      cancelled.addEventListener("abort", leave, { once: true });
      this.waiters.push(wake);
    });
  }

  /** One run became claimable: wake the longest-waiting claim, or keep the signal for one mid-claim. */
  wakeOne(): void {
    const waiter = this.waiters[0];
    if (waiter) waiter();
    else {
      this.unanswered += 1;
      this.owed = Math.min(this.owed + 1, MAX_OWED);
      if (this.claiming > 0) this.pending = Math.min(this.pending + 1, this.claiming);
    }
  }

  /** Claim attempts started so far; read before a wait, it tells whether another looked since. */
  get claimsStarted(): number {
    return this.claims.claimsStarted;
  }

  /** Whether the latest claim attempt found a run no signal announced, once it has answered. */
  latestFoundUnannounced(): Promise<boolean> {
    return this.claims.latestFoundUnannounced();
  }

  /** Claims waiting now (for tests and diagnostics). */
  get waiting(): number {
    return this.waiters.length;
  }
}
