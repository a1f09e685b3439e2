import type { ExecutableAgentRegistrar } from "../coordinator/ports.js";
import { Backoff } from "../kernel/backoff.js";
import { type Clock, clearTimer, setTimer } from "../kernel/clock.js";
import type { PublicationStore, StoredPublication } from "./ports.js";
import { logFields, type RegistrationLog, registerPublication } from "./publicationRegistration.js";

export interface RegistrationReconcilerDeps {
  store: PublicationStore;
  registrar: ExecutableAgentRegistrar;
  clock: Clock;
  /** Never handed a definition: only ids, error codes and messages. */
  log: RegistrationLog;
  /** Between passes while the Coordinator answers. */
  pollMs?: number;
  /** The first wait after the Coordinator could not be reached; doubled per failed pass, up to maxBackoffMs. */
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Publications read per page. */
  batch?: number;
}

export interface ReconcilePass {
  registered: number;
  refused: number;
  /** Seen in this pass and left unregistered (the Coordinator was down, or rejected it). */
  pending: number;
}

const DEFAULT_POLL_MS = 5_000;
const DEFAULT_INITIAL_BACKOFF_MS = 1_000;
const DEFAULT_MAX_BACKOFF_MS = 30_000;
const DEFAULT_BATCH = 100;

/**
 * Lands every committed publication in the Coordinator's catalog, oldest first. Control commits a
 * publication before registering it, so a Coordinator that is down loses nothing: this loop retries
 * until it answers. A refusal (conflicting fingerprint) is recorded and never retried.
 */
export class RegistrationReconciler {
  private timer: unknown = null;
  private pass: Promise<unknown> | null = null;
  private stopped = true;
  /** The wait while the Coordinator is unreachable; 0 while it answers. */
  private backoffMs = 0;
  private readonly backoff: Backoff;
  private wakeSoon = false;
  private readonly pollMs: number;
  private readonly batch: number;

  constructor(private readonly deps: RegistrationReconcilerDeps) {
    this.pollMs = deps.pollMs ?? DEFAULT_POLL_MS;
    this.backoff = new Backoff(
      {
        baseMs: deps.initialBackoffMs ?? DEFAULT_INITIAL_BACKOFF_MS,
        maxMs: deps.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS,
        jitter: "none",
      },
      { clock: deps.clock },
    );
    this.batch = deps.batch ?? DEFAULT_BATCH;
  }

  /** The wait before the next pass: the backoff while the Coordinator is unreachable, else pollMs. */
  get nextDelayMs(): number {
    return this.backoffMs > 0 ? this.backoffMs : this.pollMs;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimer(this.deps.clock, this.timer);
    this.timer = null;
    await this.pass;
  }

  /** One pass over the unregistered; stops at the first unreachable Coordinator (the rest would fail alike). */
  async runOnce(): Promise<ReconcilePass> {
    const counts: ReconcilePass = { registered: 0, refused: 0, pending: 0 };
    const { store, registrar, clock, log } = this.deps;
    let after: StoredPublication | undefined;
    for (;;) {
      const page = await store.listUnregistered(this.batch, after);
      for (const [index, p] of page.entries()) {
        const outcome = await registerPublication(store, registrar, clock, log, p);
        if (outcome.kind === "registered") {
          counts.registered += 1;
          this.backoffMs = 0;
          this.backoff.reset();
        } else if (outcome.kind === "refused") {
          counts.refused += 1;
          log.error(
            logFields(p, outcome.error),
            "the coordinator refused the publication; it is never retried",
          );
        } else if (outcome.kind === "failed") {
          counts.pending += 1;
          log.error(logFields(p, outcome.error), "the coordinator rejected the publication's registration");
        } else {
          counts.pending += page.length - index;
          this.backOff();
          log.warn(
            { ...logFields(p, outcome.error), backoffMs: this.backoffMs },
            "the coordinator is unavailable; registration paused",
          );
          return counts;
        }
      }
      if (page.length < this.batch) return counts;
      after = page.at(-1);
    }
  }

  /**
   * Re-registers every publication that is not refused, for a Coordinator whose catalog was lost or
   * is rebuilt; safe because registration is idempotent. Returns how many were queued again.
   */
  async rebuild(): Promise<number> {
    const queued = await this.deps.store.markAllUnregistered();
    this.deps.log.info({ queued }, "every publication queued for registration again");
    this.wake();
    return queued;
  }

  /** Runs the next pass now rather than after the current wait (when started). */
  private wake(): void {
    if (this.stopped) return;
    if (this.timer !== null) {
      clearTimer(this.deps.clock, this.timer);
      this.schedule(0);
    } else {
      this.wakeSoon = true; // a pass is running: the one after it starts at once
    }
  }

  /** Exponential from initialBackoffMs up to maxBackoffMs; a registration that lands resets it. */
  private backOff(): void {
    this.backoffMs = this.backoff.next() ?? this.pollMs;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimer(
      this.deps.clock,
      () => {
        this.timer = null;
        this.pass = this.runOnce()
          .catch((error: unknown) => {
            // The store itself failed (Control's database): retry like an unreachable Coordinator.
            this.backOff();
            this.deps.log.warn({ reason: String(error) }, "registration pass failed; retrying");
          })
          .finally(() => {
            const delay = this.wakeSoon ? 0 : this.nextDelayMs;
            this.wakeSoon = false;
            this.schedule(delay);
          });
      },
      ms,
      { unref: true },
    );
  }
}
