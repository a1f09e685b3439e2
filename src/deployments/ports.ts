import type { AdminAuditEntry } from "../control/adminAudit.js";
import type { DomainInput } from "../coordinator/domainInputs.js";
import type { Page } from "../kernel/pagination.js";
import type { SessionResourceRequest } from "../resources/ports.js";

/**
 * The Deployment context: a configured instance of an agent (environment, initial events,
 * resources, vaults, an optional cron schedule) and the append-only record of each trigger. It
 * opens ordinary sessions through the Coordinator's session entry; a deployment run records only
 * whether that session was opened (SDK: "no session lifecycle tracking").
 */

/** SDK `BetaManagedAgentsDeploymentStatus`; archived deployments report `active` with `archived_at`. */
export type DeploymentStatus = "active" | "paused";

/** SDK run error types (`error.type` of a deployment run). */
export type RunErrorType =
  | "environment_archived_error"
  | "agent_archived_error"
  | "environment_not_found_error"
  | "vault_not_found_error"
  | "vault_archived_error"
  | "file_not_found_error"
  | "memory_store_archived_error"
  | "skill_not_found_error"
  | "session_resource_not_found_error"
  | "workspace_archived_error"
  | "organization_disabled_error"
  | "session_rate_limited_error"
  | "session_creation_rejected_error"
  | "unknown_error"
  | "self_hosted_resources_unsupported_error"
  | "mcp_egress_blocked_error";

export interface RunError {
  type: RunErrorType;
  /** Human-readable and secret-free: never a credential, a token or an internal stack. */
  message: string;
}

/** SDK `BetaManagedAgentsDeploymentPausedReason`. */
export type PausedReason = { type: "manual" } | { type: "error"; error: { type: RunErrorType } };

export interface CronSchedule {
  expression: string;
  timezone: string;
}

export interface DeploymentRecord {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  /** Always a concrete version: a bare agent id pins the latest when the deployment is written. */
  agent: { id: string; version: number };
  environmentId: string;
  /** As the client sent them (wire form), validated by the edge. */
  initialEvents: unknown[];
  /** Wire form, without write-only credentials. */
  resources: unknown[];
  vaultIds: string[];
  metadata: Record<string, string>;
  budget: unknown | null;
  schedule: CronSchedule | null;
  status: DeploymentStatus;
  pausedReason: PausedReason | null;
  /**
   * The next cron instant not yet fired (before jitter), or null (no schedule, archived). The
   * scheduler's compare-and-set on this column is what makes an instant fire once.
   */
  nextRunAt: number | null;
  /** When the most recent scheduled run started (manual runs do not move it). */
  lastRunAt: number | null;
  createdAt: number;
  updatedAt: number;
  archivedAt: number | null;
}

export type TriggerContext = { type: "manual" } | { type: "schedule"; scheduledAt: number };

export interface DeploymentRunRecord {
  id: string;
  workspaceId: string;
  deploymentId: string;
  agent: { id: string; version: number };
  trigger: TriggerContext;
  /** Exactly one of `sessionId` and `error` is set once the run is recorded; neither while claimed. */
  sessionId: string | null;
  error: RunError | null;
  /** When the trigger was claimed (the row inserted). */
  claimedAt: number;
  /** When the outcome was recorded; null while the trigger is claimed but not yet settled. */
  createdAt: number | null;
}

export interface DeploymentListQuery {
  limit: number;
  cursor: string | null;
  includeArchived: boolean;
  status: DeploymentStatus | null;
  agentId: string | null;
  /** Only deployments of these agents (a caller's allow-list); null: every agent. */
  agentIds: readonly string[] | null;
  createdAtGte: number | null;
  createdAtLte: number | null;
}

export interface DeploymentRunListQuery {
  limit: number;
  cursor: string | null;
  deploymentId: string | null;
  /** Only runs of these agents (a caller's allow-list); null: every agent. */
  agentIds: readonly string[] | null;
  hasError: boolean | null;
  triggerType: TriggerContext["type"] | null;
  createdAt: { gt?: number; gte?: number; lt?: number; lte?: number };
}

/** A scheduled instant to claim: the row's compare-and-set and the run's unique key, in one transaction. */
export interface ScheduledClaim {
  deploymentId: string;
  /** The `next_run_at` the claimer read; the claim fails if another replica moved it. */
  expectedNextRunAt: number;
  /** The instant fired (the latest one due); older missed instants are skipped. */
  scheduledAt: number;
  /** The first instant after now: the deployment's new `next_run_at`. */
  nextRunAt: number | null;
  run: DeploymentRunRecord;
}

export interface DeploymentStore {
  /** Stores a new deployment and its admin audit entry in one transaction. */
  create(record: DeploymentRecord, audit: AdminAuditEntry): Promise<void>;
  get(workspaceId: string, id: string): Promise<DeploymentRecord | null>;
  /**
   * Writes every field an author changes (and `next_run_at`, which a schedule change, unpause or
   * archive resets) with its audit entry; `last_run_at` stays the scheduler's. False when gone.
   */
  update(record: DeploymentRecord, audit: AdminAuditEntry): Promise<boolean>;
  list(workspaceId: string, q: DeploymentListQuery): Promise<Page<DeploymentRecord>>;
  /** Active, unarchived, scheduled deployments whose next instant is at or before `at` (any workspace). */
  due(at: number, limit: number): Promise<DeploymentRecord[]>;
  /**
   * Claims one scheduled instant: moves `next_run_at` from the expected value and inserts the run
   * whose (deployment id, scheduled instant) is unique, in one transaction. False when another
   * replica claimed it first. When the instant's run already exists (an author's write put back
   * an older next instant), the next instant still advances and no run is written.
   */
  claimScheduled(claim: ScheduledClaim): Promise<boolean>;
  /** Inserts a manual run's claim. */
  insertRun(run: DeploymentRunRecord): Promise<void>;
  /**
   * Records a claimed run's outcome once (a second settle of the same run changes nothing and
   * answers false). A scheduled run that opened its session moves the deployment's `last_run_at`.
   */
  settleRun(
    workspaceId: string,
    runId: string,
    outcome: { sessionId: string } | { error: RunError },
    now: number,
  ): Promise<boolean>;
  getRun(workspaceId: string, id: string): Promise<DeploymentRunRecord | null>;
  /** Settled runs only: a claim not yet settled has neither a session nor an error to show. */
  listRuns(workspaceId: string, q: DeploymentRunListQuery): Promise<Page<DeploymentRunRecord>>;
  /** Claims not settled since `before` (their replica stopped mid-trigger), oldest first. */
  unsettled(before: number, limit: number): Promise<DeploymentRunRecord[]>;
  /** The deployment whose run opened each of these sessions (sessions no run opened are absent). */
  deploymentsOfSessions(workspaceId: string, sessionIds: readonly string[]): Promise<Map<string, string>>;
  /** Scheduled runs a workspace claimed at or after `since` (the per-minute cap). */
  scheduledClaimsSince(workspaceId: string, since: number): Promise<number>;
}

/**
 * A deployment's stored wire fields as a session's inputs (the Managed edge's own conversion, so a
 * deployment's session is made exactly as `POST /v1/sessions` would make it). A 400 when they
 * cannot be (a rubric file gone), so writing a deployment checks them first.
 */
export interface DeploymentSessionInputs {
  initialInputs(workspaceId: string, events: unknown[]): Promise<DomainInput[]>;
  resources(resources: unknown[]): SessionResourceRequest[];
}
