import { relaySlot } from "../coordinator/runHandOff.js";
import { REMOTE_SEEN_MS } from "../coordinator/workerRoster.js";
import type { Metrics } from "../kernel/metrics.js";
import type { WorkerTransport } from "../worker/ports.js";

/**
 * The coordinator side of the worker transport, counted: every claim by transport and kind, with
 * how long the run had been claimable (from the claim's own timestamps: no extra statement). The
 * claim time is the lease's start, so the wait uses the claiming store's clock readings only.
 */
export function meteredGateway(
  gateway: WorkerTransport,
  metrics: Metrics,
  via: "local" | "remote",
  onCall?: (owner: string) => void,
): WorkerTransport {
  return {
    ...gateway,
    async claim(owner, leaseMs, idle, prefer) {
      onCall?.(owner);
      const activation = await gateway.claim(owner, leaseMs, idle, prefer);
      if (activation) {
        const since = activation.claimableSince;
        const claimedAt = activation.leaseExpiresAt - leaseMs;
        metrics.runClaimed(
          via,
          activation.reclaimed === true,
          since === undefined ? undefined : (claimedAt - since) / 1000,
        );
      }
      return activation;
    },
    renew(runId, owner, epoch, leaseMs) {
      onCall?.(owner);
      return gateway.renew(runId, owner, epoch, leaseMs);
    },
    ...(gateway.acceptHandOffs
      ? { acceptHandOffs: countedHandOffs(gateway.acceptHandOffs, metrics, via) }
      : {}),
  };
}

/** A run an append claimed for an idle slot counts as that slot's claim, claimable for no time. */
function countedHandOffs(
  accept: NonNullable<WorkerTransport["acceptHandOffs"]>,
  metrics: Metrics,
  via: "local" | "remote",
): NonNullable<WorkerTransport["acceptHandOffs"]> {
  return (reserve) =>
    accept(() => {
      const slot = reserve();
      return (
        slot &&
        relaySlot(slot, (activation) => {
          metrics.runClaimed(via, false, 0);
          slot.deliver(activation);
        })
      );
    });
}

/** How long a remote worker counts as connected after its last claim or renewal. */
export const REMOTE_WORKER_SEEN_MS = REMOTE_SEEN_MS;
const MAX_TRACKED_WORKERS = 10_000;

/**
 * Remote worker processes that claimed or renewed recently, by identity (`<id>.<incarnation>`, the
 * owner without its slot). Their number feeds the gauge; the identities only the worker roster,
 * which an admin key reads.
 */
export class RecentWorkers {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  saw(owner: string): void {
    const identity = owner.split("/", 1)[0] ?? owner;
    this.lastSeen.delete(identity);
    // Oldest first (insertion order): a flood of identities drops the stalest, never grows.
    if (this.lastSeen.size >= MAX_TRACKED_WORKERS) {
      const oldest = this.lastSeen.keys().next().value;
      if (oldest !== undefined) this.lastSeen.delete(oldest);
    }
    this.lastSeen.set(identity, this.now());
  }

  count(): number {
    this.forgetStale();
    return this.lastSeen.size;
  }

  /** The identities seen within the window, with when. */
  seen(): Array<{ identity: string; lastSeenAt: number }> {
    this.forgetStale();
    return [...this.lastSeen].map(([identity, lastSeenAt]) => ({ identity, lastSeenAt }));
  }

  private forgetStale(): void {
    const since = this.now() - REMOTE_WORKER_SEEN_MS;
    for (const [identity, at] of this.lastSeen) {
      if (at >= since) break;
      this.lastSeen.delete(identity);
    }
  }
}
