import type { EnvironmentConfig } from "../../coordinator/environmentConfig.js";
import type { CommittedFact } from "../../coordinator/facts.js";
import type { Activation, ExecutableAgentSnapshot } from "../../coordinator/ports.js";
import { CAPTURE_CONTENT_METADATA_KEY, type CaptureRequest } from "../../kernel/contentCapture.js";
import type { JsonObject } from "../../kernel/json.js";

export interface ClaimedRun {
  runId: string;
  sessionId: string;
  threadId: string;
  owner: string;
  epoch: number;
  leaseExpiresAt: number;
  crashCount: number;
  claimableSince: number;
  reclaimed: boolean;
  /** The run's stored trace context (`runs.trace_context`). */
  traceContext: string | null;
}

export interface PinnedSessionRow {
  workspace_id: string;
  agent_snapshot_json: string;
  environment_id: string;
  environment_revision: number;
  /** Read for the capture request only: parsed when it mentions the key, so most claims parse nothing. */
  metadata_json: string;
  data_subject: string | null;
  /** The session's budget (its wire object as stored), or null for none. */
  budget_json: string | null;
  /** Whether a session_resources row exists for the session (1/0 on SQLite). */
  has_resources: boolean | number;
}

/**
 * Builds the activation a claim hands to its worker from the rows every backend reads. The pinned
 * environment revision must exist (revisions are never deleted): a missing one fails the claim
 * instead of silently running the session under some other environment.
 */
export function activationFromRows(
  claim: ClaimedRun,
  session: PinnedSessionRow,
  environmentConfigJson: string | undefined,
  history: CommittedFact[],
): Activation {
  const revision = Number(session.environment_revision);
  if (environmentConfigJson === undefined) {
    throw new Error(
      `run ${claim.runId}: environment ${session.environment_id} revision ${revision} pinned by its session is missing`,
    );
  }
  return {
    ...claim,
    workspaceId: session.workspace_id,
    agent: JSON.parse(session.agent_snapshot_json) as ExecutableAgentSnapshot,
    environment: {
      id: session.environment_id,
      revision,
      config: JSON.parse(environmentConfigJson) as EnvironmentConfig,
    },
    history,
    captureRequest: captureRequestOf(session),
    dataSubject: session.data_subject ?? null,
    sessionHasResources: Boolean(session.has_resources),
    budget: session.budget_json === null ? null : (JSON.parse(session.budget_json) as JsonObject),
  };
}

/**
 * The session's capture request, from the metadata the claim read with the rest of its session
 * row (no extra query). The value was validated when it was written; anything else asks nothing.
 */
export function captureRequestOf(session: {
  metadata_json: string;
  data_subject: string | null;
}): CaptureRequest | null {
  if (!session.metadata_json.includes(CAPTURE_CONTENT_METADATA_KEY)) return null;
  const metadata = JSON.parse(session.metadata_json) as Record<string, unknown>;
  return metadata[CAPTURE_CONTENT_METADATA_KEY] === "telemetry"
    ? { dataSubject: session.data_subject ?? null }
    : null;
}

/** When a run picked by a claim became claimable, and whether the claim takes over a lapsed lease. */
export function claimedFrom(run: { state: string; available_at: number; lease_expires_at: number | null }): {
  claimableSince: number;
  reclaimed: boolean;
} {
  const reclaimed = run.state === "claimed";
  return {
    claimableSince: Number(reclaimed ? run.lease_expires_at : run.available_at),
    reclaimed,
  };
}
