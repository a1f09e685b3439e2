import type { EgressProxy } from "./egressProxy.js";
import type { SandboxCgroup } from "./sandboxMemory.js";
import type { HostOwner } from "./sandboxWorkspace.js";
import type { SupervisedBwrap } from "./supervisedBwrap.js";

/**
 * A pre-started sandbox waiting for a session: bwrap and its supervisor running over a private,
 * empty slot directory (its /workspace), with a host uid reserved for it alone. Nothing has run in
 * it but the supervisor. It is handed to exactly one session, whose workspace the slot becomes;
 * it never goes back to the pool once a session has had it.
 */
export interface PooledSandbox {
  owner: HostOwner | null;
  /** The slot directory, bound at /workspace. */
  slot: string;
  process: SupervisedBwrap;
  /** Its egress proxy, with no policy (nothing let through) until a session takes it. */
  egress: EgressProxy;
  /** Its memory cgroup (none: memory is bounded per process); the session keeps it. */
  cgroup?: SandboxCgroup;
}

/**
 * Keeps up to `size` pooled sandboxes ready. `take` hands out a ready one (never one still
 * starting) and starts a replacement in the background; a start that fails is not retried until
 * the next `fill` (the next session), so a broken host does not spin.
 */
export class WarmPool {
  private readonly ready: PooledSandbox[] = [];
  private starting = 0;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly size: number,
    private readonly create: () => Promise<PooledSandbox>,
    /** Kills the sandbox, frees its uid and removes its slot. */
    private readonly discard: (entry: PooledSandbox) => Promise<void>,
  ) {}

  /** How many sandboxes are ready right now. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** Starts sandboxes until `size` are ready or starting. */
  fill(): void {
    while (!this.closed && this.ready.length + this.starting < this.size) {
      this.starting += 1;
      const started = this.create().then(
        (entry) => {
          this.starting -= 1;
          if (this.closed || !entry.process.alive) return this.discard(entry);
          this.ready.push(entry);
          // One that dies while it waits (killed from outside) leaves the pool.
          void entry.process.exited.then(() => {
            const at = this.ready.indexOf(entry);
            if (at < 0) return;
            this.ready.splice(at, 1);
            return this.discard(entry);
          });
        },
        () => {
          // The session that needs a sandbox starts one itself and reports what is wrong.
          this.starting -= 1;
        },
      );
      this.inFlight.add(started);
      void started.finally(() => this.inFlight.delete(started));
    }
  }

  /** Resolves when every sandbox being started has started (or failed): for tests and benches. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** A ready sandbox, no longer the pool's, or null. */
  take(): PooledSandbox | null {
    for (;;) {
      const entry = this.ready.shift();
      if (!entry) return null;
      if (entry.process.alive) return entry;
      void this.discard(entry);
    }
  }

  /** An entry taken but not used (its slot could not become the workspace): still pristine. */
  giveBack(entry: PooledSandbox): void {
    if (this.closed || !entry.process.alive || this.ready.length >= this.size) {
      void this.discard(entry);
      return;
    }
    this.ready.unshift(entry);
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = this.ready.splice(0);
    await Promise.all(entries.map((entry) => this.discard(entry)));
    // Those still starting are discarded as they come up.
    await this.settled();
  }
}
