import type { Clock } from "../kernel/clock.js";

/**
 * How long a remote worker's dropped presence connection waits before its runs are claimable:
 * a healthy worker whose connection blipped reconnects (and renews what it holds) well within it,
 * and the rest of a 2 s takeover budget is left for the lapse, the signal and another worker's
 * claim. A killed worker's sockets are closed by its kernel at once, so the drop is seen within
 * milliseconds of the kill.
 */
export const PRESENCE_GRACE_MS = 1_000;

export interface WorkerConnectionsDeps {
  /**
   * Ends the leases of claims whose owner starts with `ownerPrefix` and that nobody claimed or
   * renewed after `notRenewedAfter` (`ClaimPort.lapseClaimsOf`); the runs' ids.
   */
  lapseClaimsOf(ownerPrefix: string, notRenewedAfter: number): Promise<string[]>;
  /** Tells every replica's waiting claims that a run is claimable (the wake signal). */
  dispatchReady(runId: string): void;
  clock: Clock;
  graceMs?: number;
  log: {
    info(fields: Record<string, unknown>, message: string): void;
    warn(fields: Record<string, unknown>, message: string): void;
  };
  /** The grace timer (tests drive it); `setTimeout` by default. */
  setTimer?: (run: () => void, ms: number) => () => void;
}

/** One open presence connection; `closed()` when its socket closed, whatever the reason. */
export interface PresenceConnection {
  closed(): void;
}

/**
 * Which remote workers hold a presence connection to this replica, and what happens when the last
 * one of a worker drops: after the grace, unless it reconnected here meanwhile, its claims that
 * nobody renewed since the drop lapse now instead of after `--lease-ms`. The replica that held the
 * connection acts; a worker that reconnected to another replica within the grace renewed its runs
 * there (the hello does), so the conditional lapse spares them. A worker that is alive but cut off
 * loses its runs and is fenced out by the next claim's epoch, as after a lapsed lease.
 */
export class WorkerConnections {
  private readonly open = new Map<string, number>();
  private readonly pending = new Map<string, () => void>();
  private closing = false;
  private readonly graceMs: number;
  private readonly setTimer: (run: () => void, ms: number) => () => void;

  constructor(private readonly deps: WorkerConnectionsDeps) {
    this.graceMs = deps.graceMs ?? PRESENCE_GRACE_MS;
    this.setTimer =
      deps.setTimer ??
      ((run, ms) => {
        const timer = setTimeout(run, ms);
        return () => clearTimeout(timer);
      });
  }

  /** A presence connection of `identity` (`<worker id>.<incarnation>`) opened. */
  connected(identity: string): PresenceConnection {
    this.pending.get(identity)?.();
    this.pending.delete(identity);
    this.open.set(identity, (this.open.get(identity) ?? 0) + 1);
    let done = false;
    return {
      closed: () => {
        if (done) return;
        done = true;
        const left = (this.open.get(identity) ?? 1) - 1;
        if (left > 0) this.open.set(identity, left);
        else this.open.delete(identity);
        // This replica closing its own connections (shutdown) is no sign of the worker's death.
        if (left > 0 || this.closing) return;
        this.dropped(identity, this.deps.clock.now());
      },
    };
  }

  /** Workers with a presence connection here now (for diagnostics and tests). */
  connectedCount(): number {
    return this.open.size;
  }

  /** The replica is shutting down: closes from now on are its own doing, and pending lapses are dropped. */
  close(): void {
    this.closing = true;
    for (const cancel of this.pending.values()) cancel();
    this.pending.clear();
  }

  private dropped(identity: string, droppedAt: number): void {
    const cancel = this.setTimer(() => {
      this.pending.delete(identity);
      void this.lapse(identity, droppedAt);
    }, this.graceMs);
    this.pending.set(identity, cancel);
  }

  private async lapse(identity: string, droppedAt: number): Promise<void> {
    if (this.open.has(identity) || this.closing) return;
    try {
      const runs = await this.deps.lapseClaimsOf(`${identity}/`, droppedAt);
      for (const runId of runs) this.deps.dispatchReady(runId);
      if (runs.length > 0) {
        this.deps.log.info(
          { worker: identity, runs: runs.length, graceMs: this.graceMs },
          "worker connection dropped; its runs are claimable again",
        );
      }
    } catch (error) {
      // The lease still ends them, only later.
      this.deps.log.warn(
        { worker: identity, error: error instanceof Error ? error.message : String(error) },
        "could not end a dropped worker's leases; they lapse after the lease",
      );
    }
  }
}
