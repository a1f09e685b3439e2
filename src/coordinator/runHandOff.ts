import type { Activation, IdleSlot, IdleSlots } from "./ports.js";

/**
 * The hand-off between the input ledger, opened before any worker exists, and the in-process worker
 * that connects once it starts. Without a connected worker (a coordinator with `--workers 0`, or
 * remote workers only) nothing is reserved and every run is queued for a claim.
 */
export class RunHandOff implements IdleSlots {
  private source: (() => IdleSlot | null) | null = null;

  /** The worker's reservation of one of its idle slots; the returned function disconnects it. */
  connect(reserve: () => IdleSlot | null): () => void {
    this.source = reserve;
    return () => {
      if (this.source === reserve) this.source = null;
    };
  }

  reserve(): IdleSlot | null {
    return this.source?.() ?? null;
  }
}

/** `slot` with its delivery passed through `deliver` (a decision, a count); its release unchanged. */
export function relaySlot(slot: IdleSlot, deliver: (activation: Activation) => void): IdleSlot {
  return { owner: slot.owner, leaseMs: slot.leaseMs, release: () => slot.release(), deliver };
}
