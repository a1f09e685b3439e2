import type { EnvironmentConfig } from "../../coordinator/environmentConfig.js";
import type { CommittedFact } from "../../coordinator/facts.js";
import type { Activation, ExecutableAgentSnapshot } from "../../coordinator/ports.js";

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
  };
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
