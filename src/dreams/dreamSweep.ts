/**
 * Finishes dreams nobody polls: every `intervalMs` it brings the dreams not yet ended up to their
 * sessions (one indexed read when there are none). Every replica may run it: finishing a dream is
 * one conditional transaction, so two replicas finishing one dream still make one output store.
 */
import { type Clock, clearTimer, setTimer } from "../kernel/clock.js";
import type { DreamService } from "./dreamService.js";

export class DreamSweep {
  private timer: unknown;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly dreams: Pick<DreamService, "sweep">,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimer(this.clock, this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimer(
      this.clock,
      () => {
        this.running = this.dreams
          .sweep()
          .catch(this.onError)
          .finally(() => {
            this.running = null;
            this.schedule();
          });
      },
      this.intervalMs,
      { unref: true },
    );
  }
}
