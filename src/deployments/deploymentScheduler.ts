import { type Clock, clearTimer, setTimer } from "../kernel/clock.js";
import { catchUp } from "./cronSchedule.js";
import { type DeploymentService, newRun } from "./deploymentService.js";
import type { DeploymentRecord, DeploymentStore } from "./ports.js";
import { jitterOf, type SchedulingPolicy } from "./schedulingPolicy.js";

export interface SchedulerLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

const DUE_BATCH = 100;
const STALE_BATCH = 20;

/**
 * Fires cron deployments. Runs in every replica that serves the Coordinator; replicas sharing a
 * database fire each instant once: a claim moves the deployment's next instant by compare-and-set
 * and inserts the run keyed by (deployment id, scheduled instant) in one transaction, so every
 * other replica's claim of that instant writes nothing. An instant's identity is its cron instant,
 * never the replica's clock, so a restart finds what it missed in the rows themselves.
 *
 * Catch-up: instants missed while every replica was down are not replayed; the latest one due
 * fires once (its `scheduled_at` says which) and the older ones are skipped (counted in the log).
 */
export class DeploymentScheduler {
  private timer: unknown;
  private started = false;
  private stopped = false;
  private ticking: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Runs this replica is settling now: a stale claim is picked up once, not on every tick. */
  private readonly settling = new Set<string>();

  constructor(
    private readonly store: DeploymentStore,
    private readonly service: DeploymentService,
    private readonly policy: SchedulingPolicy,
    private readonly clock: Clock,
    private readonly log: SchedulerLog,
  ) {}

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimer(this.clock, this.timer);
    await this.ticking;
    await this.settled();
  }

  /** Resolves once the runs this replica is settling now are recorded (tests, and `stop`). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  /** One pass: claim every due instant this replica wins, settle claims stopped replicas left. */
  async tick(): Promise<void> {
    const now = this.clock.now();
    for (const deployment of await this.store.due(now, DUE_BATCH)) {
      if (this.stopped) return;
      await this.fireDue(deployment, now).catch((error: unknown) =>
        this.log.warn({ deploymentId: deployment.id, err: error }, "could not fire a scheduled deployment"),
      );
    }
    for (const run of await this.store.unsettled(now - this.policy.staleClaimMs, STALE_BATCH)) {
      if (this.settling.has(run.id) || this.stopped) continue;
      const deployment = await this.store.get(run.workspaceId, run.deploymentId);
      if (!deployment) continue;
      this.log.info({ runId: run.id }, "settling a deployment run whose replica stopped mid-trigger");
      this.track(run.id, this.service.settle(deployment, run));
    }
  }

  private async fireDue(deployment: DeploymentRecord, now: number): Promise<void> {
    const { schedule, nextRunAt } = deployment;
    if (!schedule || nextRunAt === null) return;
    // Each deployment's fixed jitter: its instant fires at or shortly after the listed time.
    const at = now - jitterOf(deployment.id, this.policy.jitterMaxMs);
    if (nextRunAt > at) return;
    const { fire, skipped, next } = catchUp(schedule, nextRunAt, at);
    const run = newRun(deployment, { type: "schedule", scheduledAt: fire }, now);
    // The cap counts this clock minute's claims (a fixed window: a jittered claim late in the
    // previous minute never counts against this one). Read before the claim, so replicas racing
    // on one minute may pass it by one each.
    const minute = Math.floor(now / 60_000) * 60_000;
    const capped =
      this.policy.triggersPerMinute > 0 &&
      (await this.store.scheduledClaimsSince(deployment.workspaceId, minute)) >=
        this.policy.triggersPerMinute;
    const claimed = await this.store.claimScheduled({
      deploymentId: deployment.id,
      expectedNextRunAt: nextRunAt,
      scheduledAt: fire,
      nextRunAt: next,
      run,
    });
    if (!claimed) return;
    if (skipped > 0)
      this.log.info(
        { deploymentId: deployment.id, skipped, scheduledAt: new Date(fire).toISOString() },
        "missed cron instants skipped; the latest one fires",
      );
    this.track(
      run.id,
      this.service.settle(
        deployment,
        run,
        capped
          ? {
              type: "session_rate_limited_error",
              message: `this workspace reached its limit of ${this.policy.triggersPerMinute} scheduled deployment runs per minute`,
            }
          : undefined,
      ),
    );
  }

  private track(runId: string, work: Promise<unknown>): void {
    this.settling.add(runId);
    const tracked = work
      .catch((error: unknown) => this.log.warn({ runId, err: error }, "could not settle a deployment run"))
      .finally(() => {
        this.inFlight.delete(tracked);
        this.settling.delete(runId);
      });
    this.inFlight.add(tracked);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimer(
      this.clock,
      () => {
        this.ticking = this.tick()
          .catch((error: unknown) => this.log.warn({ err: error }, "deployment scheduler pass failed"))
          .finally(() => {
            this.ticking = null;
            this.schedule(this.policy.tickMs);
          });
      },
      ms,
      { unref: true },
    );
  }
}
