/**
 * Aborts a model call whose stream has gone quiet. Providers only see one AbortSignal, so this
 * links the run's own signal (lost claim, cancel) with an inactivity timer that each stream event
 * resets. `stalled` tells the caller which of the two fired.
 */
export class StallGuard {
  readonly signal: AbortSignal;
  stalled = false;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onParentAbort = () => this.controller.abort();

  constructor(
    private readonly parent: AbortSignal,
    idleMs: number,
  ) {
    this.signal = this.controller.signal;
    if (parent.aborted) this.controller.abort();
    else parent.addEventListener("abort", this.onParentAbort, { once: true });
    this.timer = setTimeout(() => {
      this.stalled = true;
      this.controller.abort();
    }, idleMs);
  }

  /** Called for every stream event: restarts the one timer rather than allocating a new one. */
  touch(): void {
    this.timer.refresh();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.parent.removeEventListener("abort", this.onParentAbort);
  }
}
