/**
 * What one process's claims have seen of the runs announced claimable, so that a wake-up for a run
 * one of its claims already took sends no second claim to find nothing. The in-process worker's
 * slots keep one, and so do the coordinator's long-poll claims for remote workers.
 *
 * A dispatch signal names its run, announced here until a claim here finds it: a claim in flight
 * when the run turned claimable may take it before the slot its signal woke looks, so that slot
 * looks only while more runs are announced than claims are in flight (`worthLooking`). Such a
 * claim may even answer before the signal comes: the run is remembered as found until its slice
 * ends (`finished`), and its signal wakes nobody. A run turns claimable again only after its slice
 * ended, so a later signal for it is never mistaken for that one. A claim that finds nothing looked
 * after every run announced before it started, so those were taken elsewhere or are gone. A signal
 * without a run stands until any claim started after it has answered. Signals only lower latency:
 * polling still finds whatever this bookkeeping gets wrong.
 */
export class ClaimTracker {
  private started = 0;
  private latest: Promise<boolean> = Promise.resolve(false);
  /** Answers of the claims in flight (each resolves once its claim is accounted for). */
  private readonly answering = new Set<Promise<boolean>>();
  /** The runs the claims in flight were sent for (`target`). */
  private readonly targeted = new Set<string>();
  /** Announced and not found by a claim here yet: the claims started before each came. */
  private readonly announced = new Map<string, number>();
  /** Runs a claim here found before their signal came, until their slice ends. */
  private readonly foundFirst = new Set<string>();
  private signalsWithoutRun = 0;

  /**
   * A run turned claimable (`runId` null: something may have, a reconnect's catch-up). True when a
   * slot should be woken: false when a claim here took that run already, unless that claim was
   * woken for another run, which is then left to this signal's wake.
   */
  announce(runId: string | null): boolean {
    if (runId !== null && this.foundFirst.delete(runId)) return this.uncovered();
    const key = runId ?? `${WITHOUT_RUN}${++this.signalsWithoutRun}`;
    this.announced.delete(key);
    this.announced.set(key, this.started);
    forgetPast(this.announced);
    return true;
  }

  /** The slice of a run a claim here found has ended (or the run was handed back). */
  finished(runId: string): void {
    this.foundFirst.delete(runId);
  }

  /**
   * The run a claim about to start should prefer: the oldest announced run no claim in flight was
   * sent for. Concurrent claims then go for different runs instead of racing for the oldest one,
   * where the loser, its snapshot older than the runs announced since, comes back empty.
   */
  target(): string | undefined {
    for (const key of this.announced.keys()) {
      if (!key.startsWith(WITHOUT_RUN) && !this.targeted.has(key)) return key;
    }
    return undefined;
  }

  /**
   * Runs one claim attempt for `target` (see `target()`) and accounts for its answer (`runOf` names
   * the run it found).
   */
  claim<T>(
    attempt: (target: string | undefined) => Promise<T | null>,
    runOf: (found: T) => string,
    target: string | undefined = this.target(),
  ): Promise<T | null> {
    const number = ++this.started;
    if (target !== undefined) this.targeted.add(target);
    const look = attempt(target);
    const answer = look.then(
      (found) => (found === null ? this.answered(number, undefined) : this.answered(number, runOf(found))),
      // A failed look tells nothing about the queue: count it as one that found a run.
      () => true,
    );
    this.latest = answer;
    this.answering.add(answer);
    void answer.then(() => {
      this.answering.delete(answer);
      if (target !== undefined) this.targeted.delete(target);
    });
    return look;
  }

  /**
   * For a claim a signal woke: true while more runs are announced than claims are in flight to take
   * them; otherwise it waits for an answer and counts again (false once none is left).
   */
  async worthLooking(): Promise<boolean> {
    while (this.announced.size > 0 && !this.uncovered()) {
      await Promise.race(this.answering);
    }
    return this.announced.size > 0;
  }

  /** True while more runs are announced than claims are in flight to take them. */
  uncovered(): boolean {
    return this.announced.size > this.answering.size;
  }

  /** Claim attempts started so far; read before a wait, it tells whether another looked since. */
  get claimsStarted(): number {
    return this.started;
  }

  /**
   * Whether the latest claim attempt found a run no signal announced (a lapsed lease taken over, say:
   * more like it may be waiting, and only polls find them), once it has answered.
   */
  latestFoundUnannounced(): Promise<boolean> {
    return this.latest;
  }

  /**
   * `run`: the run found, undefined when the claim found nothing. True when it found a run not
   * announced (yet).
   */
  private answered(number: number, run: string | undefined): boolean {
    const unannounced = run !== undefined && !this.announced.delete(run);
    if (run !== undefined && unannounced) {
      this.foundFirst.add(run);
      forgetPast(this.foundFirst);
    }
    for (const [key, startedBefore] of this.announced) {
      // Announced after this claim started: it may not have seen that run.
      if (startedBefore >= number) continue;
      if (run === undefined || key.startsWith(WITHOUT_RUN)) this.announced.delete(key);
    }
    return unannounced;
  }
}

/** Keys of signals without a run; run ids never start with it. */
const WITHOUT_RUN = "?";
/** A bound, not a working size: runs announced (or found) faster than anything accounts for them. */
const MAX_REMEMBERED = 1_000;

/** Past the bound, the oldest entry goes. */
function forgetPast(remembered: Map<string, number> | Set<string>): void {
  if (remembered.size <= MAX_REMEMBERED) return;
  const oldest = remembered.keys().next();
  if (!oldest.done) remembered.delete(oldest.value);
}
