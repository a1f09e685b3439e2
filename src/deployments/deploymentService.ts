import { type Actor, type AuditAction, auditEntry } from "../control/adminAudit.js";
import { admitCreateBudget } from "../coordinator/budgetRules.js";
import type { EnvironmentStore } from "../coordinator/ports.js";
import type { AgentPinner, SessionEntry } from "../coordinator/sessionEntry.js";
import type { Clock } from "../kernel/clock.js";
import { AwakenError, invalid, notFound } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import type { Page } from "../kernel/pagination.js";
import { nextInstant, validateSchedule } from "./cronSchedule.js";
import { type DeploymentChanges, NO_DEPLOYMENT_CHANGES } from "./deploymentChanges.js";
import type {
  CronSchedule,
  DeploymentListQuery,
  DeploymentRecord,
  DeploymentRunListQuery,
  DeploymentRunRecord,
  DeploymentSessionInputs,
  DeploymentStore,
  PausedReason,
  RunError,
  TriggerContext,
} from "./ports.js";
import { pausesSchedule, runErrorOf } from "./runErrors.js";

/** What a deployment is written with (the edge validated each field's shape). */
export interface DeploymentInput {
  name: string;
  description: string | null;
  agent: { id: string; version?: number | undefined };
  environmentId: string;
  initialEvents: unknown[];
  resources: unknown[];
  vaultIds: string[];
  metadata: Record<string, string>;
  budget: unknown | null;
  schedule: CronSchedule | null;
}

/** An update: each field absent is kept; `metadata` is a patch (null deletes a key). */
export type DeploymentPatch = Partial<Omit<DeploymentInput, "metadata">> & {
  metadata?: Record<string, string | null>;
};

export interface DeploymentServiceDeps {
  store: DeploymentStore;
  /** Opens each trigger's session: the same entry every edge uses, keyed by the run's id. */
  entry: Pick<SessionEntry, "openKeyed" | "findKeyed">;
  /** Resolves a bare agent id to its latest version when the deployment is written. */
  pinner: AgentPinner;
  environments: Pick<EnvironmentStore, "get">;
  inputs: DeploymentSessionInputs;
  clock: Clock;
  changes?: DeploymentChanges;
  /** Failures the server's log should show (the run records only a secret-free message). */
  warn?: (message: string, error: unknown) => void;
}

/** How long a run's key names its session: longer than any claim stays unsettled. */
const RUN_KEY_WINDOW_MS = 7 * 24 * 3_600_000;
const METADATA_MAX_KEYS = 16;
/** A manual run still unsettled after this long was abandoned by its request (see `settle`). */
const MANUAL_RUN_LATE_MS = 60_000;

/**
 * Deployments: authoring (create, update, pause, unpause, archive) and triggers. A trigger claims
 * one append-only run record, then opens an ordinary session through the session entry with the
 * initial events as its first inputs (sent through `SessionService.send` by the session's
 * creation), then records the session or the error once. Every state change goes through
 * `changed`, the single place a notification is emitted from.
 */
export class DeploymentService {
  private readonly changes: DeploymentChanges;

  constructor(private readonly deps: DeploymentServiceDeps) {
    this.changes = deps.changes ?? NO_DEPLOYMENT_CHANGES;
  }

  get clock(): Clock {
    return this.deps.clock;
  }

  async create(by: Actor, input: DeploymentInput): Promise<DeploymentRecord> {
    const schedule = input.schedule ? validateSchedule(input.schedule) : null;
    const agent = await this.pinAgent(by.workspaceId, input.agent, input.budget);
    await this.checkEnvironment(by.workspaceId, input.environmentId);
    await this.deps.inputs.initialInputs(by.workspaceId, input.initialEvents);
    this.deps.inputs.resources(input.resources);
    const now = this.deps.clock.now();
    const record: DeploymentRecord = {
      id: newId("depl", now),
      workspaceId: by.workspaceId,
      name: input.name,
      description: input.description,
      agent,
      environmentId: input.environmentId,
      initialEvents: input.initialEvents,
      resources: input.resources,
      vaultIds: input.vaultIds,
      metadata: input.metadata,
      budget: input.budget,
      schedule,
      status: "active",
      pausedReason: null,
      nextRunAt: schedule ? nextInstant(schedule, now) : null,
      lastRunAt: null,
      createdAt: now,
      updatedAt: now,
      archivedAt: null,
    };
    await this.deps.store.create(record, this.audit(by, "create", null, record, now));
    this.changes.changed({ type: "deployment.created", deployment: record });
    return record;
  }

  async get(workspaceId: string, id: string): Promise<DeploymentRecord> {
    const record = await this.deps.store.get(workspaceId, id);
    if (!record) throw notFound("deployment", id);
    return record;
  }

  list(workspaceId: string, q: DeploymentListQuery): Promise<Page<DeploymentRecord>> {
    return this.deps.store.list(workspaceId, q);
  }

  async update(by: Actor, id: string, patch: DeploymentPatch): Promise<DeploymentRecord> {
    const current = await this.writable(by.workspaceId, id, "updated");
    const schedule =
      patch.schedule === undefined
        ? current.schedule
        : patch.schedule
          ? validateSchedule(patch.schedule)
          : null;
    const budget = patch.budget === undefined ? current.budget : patch.budget;
    const agent =
      patch.agent !== undefined || patch.budget !== undefined
        ? await this.pinAgent(by.workspaceId, patch.agent ?? current.agent, budget)
        : current.agent;
    if (patch.environmentId !== undefined) await this.checkEnvironment(by.workspaceId, patch.environmentId);
    if (patch.initialEvents !== undefined)
      await this.deps.inputs.initialInputs(by.workspaceId, patch.initialEvents);
    const metadata = patchMetadata(current.metadata, patch.metadata);
    const now = this.deps.clock.now();
    const scheduleChanged = JSON.stringify(schedule) !== JSON.stringify(current.schedule);
    const next: DeploymentRecord = {
      ...current,
      name: patch.name ?? current.name,
      description: patch.description === undefined ? current.description : patch.description || null,
      agent,
      environmentId: patch.environmentId ?? current.environmentId,
      initialEvents: patch.initialEvents ?? current.initialEvents,
      resources: patch.resources ?? current.resources,
      vaultIds: patch.vaultIds ?? current.vaultIds,
      metadata,
      budget,
      schedule,
      // A new schedule starts from now; an unchanged one keeps its next instant.
      nextRunAt: scheduleChanged ? (schedule ? nextInstant(schedule, now) : null) : current.nextRunAt,
      updatedAt: now,
    };
    return this.write(by, "update", current, next, "deployment.updated");
  }

  async archive(by: Actor, id: string): Promise<DeploymentRecord> {
    const current = await this.get(by.workspaceId, id);
    if (current.archivedAt !== null) return current;
    const now = this.deps.clock.now();
    // SDK: archived deployments report `active` with `archived_at` set, and no upcoming runs.
    const next: DeploymentRecord = {
      ...current,
      status: "active",
      pausedReason: null,
      nextRunAt: null,
      archivedAt: now,
      updatedAt: now,
    };
    return this.write(by, "archive", current, next, "deployment.archived");
  }

  async pause(by: Actor, id: string): Promise<DeploymentRecord> {
    const current = await this.writable(by.workspaceId, id, "paused");
    return this.setPaused(by, current, { type: "manual" });
  }

  async unpause(by: Actor, id: string): Promise<DeploymentRecord> {
    const current = await this.writable(by.workspaceId, id, "unpaused");
    if (current.status === "active") return current;
    const now = this.deps.clock.now();
    // Instants that passed while paused were suppressed: the schedule resumes from now.
    const next: DeploymentRecord = {
      ...current,
      status: "active",
      pausedReason: null,
      nextRunAt: current.schedule ? nextInstant(current.schedule, now) : null,
      updatedAt: now,
    };
    return this.write(by, "update", current, next, "deployment.unpaused");
  }

  /** `run` now: a manual trigger, permitted while paused (SDK), refused once archived. */
  async runNow(by: Actor, id: string): Promise<DeploymentRunRecord> {
    const deployment = await this.writable(by.workspaceId, id, "run");
    const now = this.deps.clock.now();
    const run = newRun(deployment, { type: "manual" }, now);
    await this.deps.store.insertRun(run);
    return this.settle(deployment, run);
  }

  async getRun(workspaceId: string, id: string): Promise<DeploymentRunRecord> {
    const run = await this.deps.store.getRun(workspaceId, id);
    if (!run || run.createdAt === null) throw notFound("deployment run", id);
    return run;
  }

  listRuns(workspaceId: string, q: DeploymentRunListQuery): Promise<Page<DeploymentRunRecord>> {
    return this.deps.store.listRuns(workspaceId, q);
  }

  /** Which deployment opened each session (a session's `deployment_id`); others are absent. */
  deploymentsOfSessions(workspaceId: string, sessionIds: readonly string[]): Promise<Map<string, string>> {
    return this.deps.store.deploymentsOfSessions(workspaceId, sessionIds);
  }

  /**
   * Opens a claimed run's session, or records why it could not be opened, exactly once. Settling
   * the same run again (its first replica stopped mid-way) reaches the session the first attempt
   * made, by the run's key. `refuse` records an error without opening a session (a rate limit).
   */
  async settle(
    deployment: DeploymentRecord,
    run: DeploymentRunRecord,
    refuse?: RunError,
  ): Promise<DeploymentRunRecord> {
    let outcome: { sessionId: string } | { error: RunError };
    if (refuse) outcome = { error: refuse };
    else if (run.trigger.type === "manual" && run.claimedAt < this.deps.clock.now() - MANUAL_RUN_LATE_MS) {
      // A manual run whose replica stopped before recording it: its caller saw the request fail,
      // so no session is opened long after; one the first attempt opened is recorded.
      const session = await this.deps.entry.findKeyed(
        run.workspaceId,
        "deployment_run",
        run.id,
        RUN_KEY_WINDOW_MS,
      );
      outcome = session
        ? { sessionId: session.id }
        : {
            error: {
              type: "unknown_error",
              message: "the server stopped before this run's session was opened",
            },
          };
    } else {
      try {
        const session = await this.deps.entry.openKeyed(
          run.workspaceId,
          "deployment_run",
          run.id,
          RUN_KEY_WINDOW_MS,
          {
            agent: { id: run.agent.id, version: run.agent.version },
            environmentId: deployment.environmentId,
            resources: this.deps.inputs.resources(deployment.resources),
            vaultIds: deployment.vaultIds,
            budget: deployment.budget,
            initialInputs: await this.deps.inputs.initialInputs(run.workspaceId, deployment.initialEvents),
          },
        );
        outcome = { sessionId: session.id };
      } catch (error) {
        const recorded = runErrorOf(error);
        if (recorded.type === "unknown_error")
          this.deps.warn?.("a deployment run could not open its session", error);
        outcome = { error: recorded };
      }
    }
    const now = this.deps.clock.now();
    const settled = await this.deps.store.settleRun(run.workspaceId, run.id, outcome, now);
    const stored = (await this.deps.store.getRun(run.workspaceId, run.id)) ?? run;
    if (!settled) return stored;
    this.changes.changed({
      type: "error" in outcome ? "deployment_run.failed" : "deployment_run.succeeded",
      run: stored,
    });
    if ("error" in outcome && run.trigger.type === "schedule" && pausesSchedule(outcome.error.type)) {
      await this.autoPause(run.workspaceId, run.deploymentId, outcome.error);
    }
    return stored;
  }

  /** A scheduled fire whose error will recur pauses the deployment with that error as the reason. */
  private async autoPause(workspaceId: string, id: string, error: RunError): Promise<void> {
    const current = await this.deps.store.get(workspaceId, id);
    if (!current || current.archivedAt !== null || current.status === "paused") return;
    await this.setPaused({ workspaceId, actor: "system" }, current, {
      type: "error",
      error: { type: error.type },
    });
  }

  private async setPaused(
    by: Actor,
    current: DeploymentRecord,
    reason: PausedReason,
  ): Promise<DeploymentRecord> {
    const now = this.deps.clock.now();
    const next: DeploymentRecord = { ...current, status: "paused", pausedReason: reason, updatedAt: now };
    return this.write(by, "update", current, next, "deployment.paused");
  }

  private async write(
    by: Actor,
    action: AuditAction,
    current: DeploymentRecord,
    next: DeploymentRecord,
    change: "deployment.updated" | "deployment.paused" | "deployment.unpaused" | "deployment.archived",
  ): Promise<DeploymentRecord> {
    if (!(await this.deps.store.update(next, this.audit(by, action, current, next, next.updatedAt))))
      throw notFound("deployment", current.id);
    this.changes.changed({ type: change, deployment: next });
    return next;
  }

  private async writable(workspaceId: string, id: string, verb: string): Promise<DeploymentRecord> {
    const current = await this.get(workspaceId, id);
    if (current.archivedAt !== null)
      throw invalid(`deployment ${id} is archived and cannot be ${verb}; create a new deployment`);
    return current;
  }

  private async pinAgent(
    workspaceId: string,
    ref: { id: string; version?: number | undefined },
    budget: unknown | null,
  ): Promise<{ id: string; version: number }> {
    const snapshot = await this.deps.pinner.pin(workspaceId, {
      id: ref.id,
      ...(ref.version !== undefined ? { version: ref.version } : {}),
    });
    // SDK: a budget needs the agent's model to have a list price; refused when written, not when fired.
    admitCreateBudget(budget, snapshot);
    return { id: snapshot.agentId, version: snapshot.version };
  }

  private async checkEnvironment(workspaceId: string, id: string): Promise<void> {
    const env = await this.deps.environments.get(workspaceId, id);
    if (!env)
      throw new AwakenError("environment_not_found", `environment ${JSON.stringify(id)} was not found`, {
        details: { error_code: "environment_not_found" },
      });
    if (env.archivedAt !== null)
      throw new AwakenError(
        "environment_archived",
        `environment ${id} is archived; use another environment`,
        {
          details: { error_code: "environment_archived" },
        },
      );
  }

  private audit(
    by: Actor,
    action: AuditAction,
    before: DeploymentRecord | null,
    after: DeploymentRecord | null,
    at: number,
  ) {
    const view = after ?? before;
    return auditEntry(by, {
      action,
      resourceType: "deployment",
      resourceId: view?.id ?? "",
      before: before && auditView(before),
      after: after && auditView(after),
      at,
    });
  }
}

/** The secret-free view a digest is taken of (a deployment holds no secret; its times excluded). */
function auditView(d: DeploymentRecord) {
  const { nextRunAt: _n, lastRunAt: _l, updatedAt: _u, ...view } = d;
  return view;
}

export function newRun(
  deployment: DeploymentRecord,
  trigger: TriggerContext,
  now: number,
): DeploymentRunRecord {
  return {
    id: newId("drun", now),
    workspaceId: deployment.workspaceId,
    deploymentId: deployment.id,
    agent: deployment.agent,
    trigger,
    sessionId: null,
    error: null,
    claimedAt: now,
    createdAt: null,
  };
}

function patchMetadata(
  current: Record<string, string>,
  patch: Record<string, string | null> | undefined,
): Record<string, string> {
  if (!patch) return current;
  const next = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  if (Object.keys(next).length > METADATA_MAX_KEYS)
    throw invalid(`metadata: at most ${METADATA_MAX_KEYS} keys after the patch`);
  return next;
}
