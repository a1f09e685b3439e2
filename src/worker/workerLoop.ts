import { randomBytes } from "node:crypto";
import type { Activation, IdleSlot } from "../coordinator/ports.js";
import { ClaimTracker } from "../kernel/claimTracker.js";
import { sleep } from "../kernel/clock.js";
import type { Tracing } from "../kernel/tracing.js";
import type { RuntimePorts, TurnOutcome } from "../runtime/ports.js";
import { TurnRunner } from "../runtime/turnRunner.js";
import type { WorkerTransport } from "./ports.js";
import type { WorkerOptions } from "./workerOptions.js";

type RuntimeDeps = Omit<RuntimePorts, "readThread" | "commit" | "publish">;

/**
 * A slot waiting for work: woken by a signal or its poll interval, or handed a run an input append
 * claimed for it. A reserved waiter (an append's statement is in flight for it) is out of the list
 * signals wake, and its poll interval waits for the reservation's end.
 */
interface Waiter {
  owner: string;
  wake(): void;
  hand(activation: Activation): void;
  timeout(): void;
  reserved: boolean;
  timedOut: boolean;
}

/**
 * The claim → renew → run → settle loop. A worker identity is its id plus an incarnation chosen at
 * start, so a restarted worker never mistakes its predecessor's claims for its own.
 */
export class Worker {
  readonly identity: string;
  private stopping = false;
  private readonly stopController = new AbortController();
  private readonly inFlight = new Map<
    string,
    { controller: AbortController; owner: string; epoch: number }
  >();
  private slots: Promise<void>[] = [];
  private waiters: Waiter[] = [];
  /** Waiters lent to an append whose statement is in flight (`reserveIdleSlot`). */
  private readonly reserved = new Set<Waiter>();
  /** Wake signals that arrived while no slot was waiting (a claim was in flight); never dropped. */
  private pendingWakes = 0;
  /** What the slots' claims found of the runs signals announced. */
  private readonly claims = new ClaimTracker();
  private unsubscribe: Array<() => void> = [];
  private started = false;
  private stopped = false;

  constructor(
    private readonly transport: WorkerTransport,
    private readonly runtime: RuntimeDeps,
    private readonly options: WorkerOptions,
  ) {
    this.identity = `${options.id}.${randomBytes(4).toString("hex")}`;
  }

  /** For readiness: claiming work, draining after stop() was called, or done. */
  get state(): "starting" | "polling" | "draining" | "stopped" {
    if (this.stopped) return "stopped";
    if (this.stopping) return "draining";
    return this.started ? "polling" : "starting";
  }

  start(): void {
    this.started = true;
    this.unsubscribe.push(
      // One signal = one unit of work: wake one idle slot, not all of them, so idle slots do not
      // queue empty claim transactions in front of the run that was just dispatched.
      this.transport.onWork((runId) => {
        if (this.claims.announce(runId)) this.wakeOne();
      }),
      this.transport.onRunCancelled((runId) => this.inFlight.get(runId)?.controller.abort()),
    );
    if (this.transport.acceptHandOffs)
      this.unsubscribe.push(this.transport.acceptHandOffs(() => this.reserveIdleSlot()));
    for (let slot = 0; slot < this.options.concurrency; slot++) this.slots.push(this.slotLoop(slot));
  }

  /** The claims the slots hold now (a presence hello renews them: `presenceStream.ts`). */
  held(): Array<{ runId: string; owner: string; epoch: number }> {
    return [...this.inFlight].map(([runId, run]) => ({ runId, owner: run.owner, epoch: run.epoch }));
  }

  /** Stops claiming, lets in-flight runs settle for `drainMs`, then releases what is left. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.wakeAll();
    const drained = Promise.all(this.slots);
    const timedOut = await Promise.race([
      drained.then(() => false),
      sleep(this.options.drainMs).then(() => true),
    ]);
    if (timedOut) {
      this.stopController.abort();
      // A reservation the ledger never ended (it always does) must not hold the stop forever.
      for (const waiter of this.reserved) waiter.wake();
      // Each run has its own controller, aborted here: one listener per run on a shared signal
      // would pile up past Node's limit of ten (MaxListenersExceededWarning) and leak on errors.
      for (const run of this.inFlight.values()) run.controller.abort();
      await drained;
    }
    for (const off of this.unsubscribe) off();
    this.stopped = true;
  }

  private async slotLoop(slot: number): Promise<void> {
    const owner = `${this.identity}/${slot}`;
    let idle = false;
    // A run an input append claimed for this slot while it waited: it is this slot's, even while
    // stopping (drained like any run in flight).
    let handed: Activation | null = null;
    while (!this.stopping || handed) {
      let activation = handed;
      handed = null;
      if (!activation) {
        let claimed = false;
        try {
          activation = await this.claims.claim(
            (target) => this.transport.claim(owner, this.options.leaseMs, idle, target),
            (found) => found.runId,
          );
          claimed = true;
          // It took another run than one announced (an older one, or a lapsed lease): that one still
          // waits for a look, and the signal that announced it was spent on this slot.
          if (this.claims.uncovered()) this.waiters[0]?.wake();
        } catch (error) {
          this.runtime.log.warn({ owner, error: String(error) }, "claim failed; will retry");
        }
        // An answered claim that found nothing leaves the slot idle as a settled slice does.
        idle = claimed;
        if (!activation) {
          handed = await this.waitForWork(owner);
          continue;
        }
      }
      // A settled slice leaves nothing claimable behind it: whatever makes a run claimable again
      // signals (or is found by the poll), so the slot waits instead of claiming into an empty
      // queue. Signals that came while it ran were kept (`pendingWakes`) and wake it at once.
      const outcome = await this.execute(activation);
      idle = outcome === "settled";
      if (idle && this.transport.signalsEveryRun) handed = await this.waitForWork(owner);
    }
  }

  /**
   * One of the slots waiting for work, for an input append to claim its run for (`IdleSlot`); null
   * when every slot is busy, reserved already, or the worker is stopping.
   */
  reserveIdleSlot(): IdleSlot | null {
    if (this.stopping) return null;
    const waiter = this.waiters.shift();
    if (!waiter) return null;
    waiter.reserved = true;
    this.reserved.add(waiter);
    let ended = false;
    return {
      owner: waiter.owner,
      leaseMs: this.options.leaseMs,
      deliver: (activation) => {
        if (ended) return;
        ended = true;
        this.reserved.delete(waiter);
        waiter.hand(activation);
      },
      release: () => {
        if (ended) return;
        ended = true;
        this.reserved.delete(waiter);
        waiter.reserved = false;
        if (this.stopping) waiter.wake();
        else if (waiter.timedOut) waiter.timeout();
        else if (this.pendingWakes > 0) {
          // A signal came while it was reserved and found no other slot waiting: it is this one's.
          this.pendingWakes -= 1;
          waiter.wake();
        } else this.waiters.unshift(waiter);
      },
    };
  }

  /** Runs one claimed slice; "settled" when it ended the claim itself (the run is not claimable). */
  private async execute(activation: Activation): Promise<"settled" | "other"> {
    const controller = new AbortController();
    // A claim answered after stop() gave up draining starts aborted (stop() aborts only the runs
    // it finds in flight).
    if (this.stopController.signal.aborted) controller.abort();
    this.inFlight.set(activation.runId, { controller, owner: activation.owner, epoch: activation.epoch });
    const renewEvery = Math.max(50, Math.floor(this.options.leaseMs / 3));
    const timer = setInterval(() => {
      this.transport
        .renew(activation.runId, activation.owner, activation.epoch, this.options.leaseMs)
        .then((held) => {
          if (!held) controller.abort();
        })
        .catch((error) =>
          this.runtime.log.warn({ runId: activation.runId, error: String(error) }, "renew failed"),
        );
    }, renewEvery);
    try {
      const runner = new TurnRunner(
        activation,
        {
          ...this.runtime,
          readThread: (threadId, afterSeq) => this.transport.readThread(threadId, afterSeq),
          commit: (op) => this.transport.commit(op, activation.sessionId),
          publish: (sessionId, evidence) => this.transport.publish(sessionId, evidence),
        },
        controller.signal,
      );
      const tracing = this.runtime.tracing;
      const outcome = tracing
        ? await this.traced(tracing, activation, runner)
        : await this.runSlice(activation, runner);
      this.claims.finished(activation.runId);
      if (outcome === "lost_claim" && this.stopController.signal.aborted) {
        // We gave up the run ourselves (shutdown): hand it back instead of letting the lease lapse.
        await this.transport.release(activation.runId, activation.owner, activation.epoch);
      }
      return outcome === "settled" ? "settled" : "other";
    } catch (error) {
      this.runtime.log.warn(
        { runId: activation.runId, error: String(error) },
        "run failed in the worker; its lease will lapse",
      );
      return "other";
    } finally {
      clearInterval(timer);
      this.inFlight.delete(activation.runId);
      this.claims.finished(activation.runId);
    }
  }

  private async runSlice(activation: Activation, runner: TurnRunner): Promise<TurnOutcome> {
    const outcome = await runner.run();
    // Inside the slice's span when traced: the line carries its trace and span ids.
    this.runtime.log.info({ runId: activation.runId, epoch: activation.epoch, outcome }, "run slice ended");
    return outcome;
  }

  /**
   * The claim's span, a child of the trace of the input that started or resumed the run (stored
   * with it, so it continues across processes and restarts); model and tool spans nest under it.
   */
  private async traced(tracing: Tracing, activation: Activation, runner: TurnRunner): Promise<TurnOutcome> {
    const span = tracing.startSpan(
      "run slice",
      "consumer",
      {
        "awaken.run.id": activation.runId,
        "awaken.run.epoch": activation.epoch,
        "awaken.run.crash_count": activation.crashCount,
        "awaken.session.id": activation.sessionId,
        "awaken.worker.owner": activation.owner,
      },
      activation.traceContext ?? null,
    );
    try {
      const outcome = await tracing.withSpan(span, () => this.runSlice(activation, runner));
      span.setAttributes({ "awaken.run.outcome": outcome });
      span.end();
      return outcome;
    } catch (error) {
      span.end("worker_error");
      throw error;
    }
  }

  /**
   * Waits for a wake signal, or a poll interval. With a transport that signals every run, a poll
   * interval during which another slot started a claim is waited again: that claim looked at the
   * queue after this wait began, and runs claimable since came with signals, so this slot's claim
   * would find nothing too. When the latest claim found a run no signal announced, more like it may
   * be waiting (lapsed leases after a crash): this slot looks as well.
   */
  private async waitForWork(owner: string): Promise<Activation | null> {
    for (;;) {
      const claimsBefore = this.claims.claimsStarted;
      const how = await this.waitOnce(owner);
      if (typeof how === "object") return how;
      if (how === "woken") {
        // Woken for a run a claim in flight took meanwhile: nothing is left for this slot's claim.
        if (this.stopping || (await this.claims.worthLooking())) return null;
        continue;
      }
      if (!this.transport.signalsEveryRun || this.claims.claimsStarted === claimsBefore) return null;
      if (await this.claims.latestFoundUnannounced()) return null;
    }
  }

  private waitOnce(owner: string): Promise<"woken" | "timeout" | Activation> {
    // A slot whose claim was in flight when stop() woke everyone must not sleep a poll interval.
    if (this.stopping) return Promise.resolve("woken");
    if (this.pendingWakes > 0) {
      this.pendingWakes -= 1;
      return Promise.resolve("woken");
    }
    return new Promise((resolve) => {
      const finish = (how: "woken" | "timeout" | Activation) => {
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(how);
      };
      const waiter: Waiter = {
        owner,
        reserved: false,
        timedOut: false,
        wake: () => finish("woken"),
        hand: (activation) => finish(activation),
        timeout: () => finish("timeout"),
      };
      const timer = setTimeout(() => {
        // Reserved: the append in flight delivers a run or releases the slot, which then times out.
        if (waiter.reserved) waiter.timedOut = true;
        else finish("timeout");
      }, this.options.pollMs);
      this.waiters.push(waiter);
    });
  }

  private wakeOne(): void {
    const waiter = this.waiters[0];
    if (waiter) waiter.wake();
    // Every slot is busy (or mid-claim, possibly just before the run became visible): remember the
    // signal so the next slot to look for work claims again at once instead of sleeping a poll.
    else this.pendingWakes = Math.min(this.pendingWakes + 1, this.options.concurrency);
  }

  private wakeAll(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.wake();
  }
}
