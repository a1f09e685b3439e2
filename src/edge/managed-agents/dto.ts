import type { AgentHead, StoredPublication } from "../../control/ports.js";
import type { OutcomeState } from "../../coordinator/outcomes.js";
import type { EnvironmentRecord, SessionRecord } from "../../coordinator/ports.js";
import { isoTime } from "../../kernel/clock.js";
import type { Page } from "../../kernel/pagination.js";
import type { SessionResourceRecord } from "../../resources/ports.js";
import { definitionFields } from "./agentFields.js";
import { sessionMultiagentDto } from "./multiagentDto.js";
import { sessionResourceDto } from "./sessionResourceDto.js";
import { sessionStatsDto, sessionUsageDto } from "./usageDto.js";

export { eventDto } from "./eventDto.js";

// Projections from domain records to the Managed Agents wire (wire §2). Nothing else in the
// product knows these shapes.

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

export function agentDto(head: AgentHead, publication: StoredPublication): Record<string, unknown> {
  const d = publication.definition;
  const isLatest = publication.version === head.latestVersion;
  return {
    id: head.id,
    type: "agent",
    ...definitionFields(d),
    metadata: d.metadata,
    version: publication.version,
    created_at: isoTime(head.createdAt),
    updated_at: isoTime(isLatest ? head.updatedAt : publication.createdAt),
    archived_at: iso(head.archivedAt),
  };
}

export function environmentDto(e: EnvironmentRecord): Record<string, unknown> {
  return {
    id: e.id,
    type: "environment",
    name: e.name,
    description: e.description,
    config: e.config,
    metadata: e.metadata,
    ...(e.scope !== null ? { scope: e.scope } : {}),
    created_at: isoTime(e.createdAt),
    updated_at: isoTime(e.updatedAt),
    archived_at: iso(e.archivedAt),
  };
}

/** `resources`: the session's resource rows (the one truth; the record's legacy column is empty). */
export function sessionDto(
  s: SessionRecord,
  now: number,
  resources: readonly SessionResourceRecord[],
  outcomes: readonly OutcomeState[] = [],
  /** The deployment whose run opened the session, or null. */
  deploymentId: string | null = null,
): Record<string, unknown> {
  const d = s.agent.definition;
  return {
    id: s.id,
    type: "session",
    // An archived session reads as terminated (wire §2.3).
    status: s.archivedAt !== null ? "terminated" : s.status,
    agent: {
      id: s.agent.agentId,
      type: "agent",
      version: s.agent.version,
      ...definitionFields(d),
      // The session shows its roster's agents whole, as pinned when it was created.
      multiagent: sessionMultiagentDto(s.agent),
    },
    environment_id: s.environmentId,
    resources: resources.map(sessionResourceDto),
    vault_ids: s.vaultIds,
    metadata: s.metadata,
    title: s.title,
    budget: s.budget,
    outcome_evaluations: outcomes.map(outcomeEvaluationDto),
    stats: sessionStatsDto(s, now),
    usage: sessionUsageDto(s, now),
    deployment_id: deploymentId,
    created_at: isoTime(s.createdAt),
    updated_at: isoTime(s.updatedAt),
    archived_at: iso(s.archivedAt),
    // An Awaken extension (the SDK's session has no field for it): the profile the session is attributed to.
    ...(s.userProfileId ? { awaken_user_profile_id: s.userProfileId } : {}),
  };
}

/**
 * SDK `BetaManagedAgentsOutcomeEvaluationResource`. An attempt under revision reads `running` (the
 * agent is producing again); the explanation is the last verdict's.
 */
export function outcomeEvaluationDto(o: OutcomeState): Record<string, unknown> {
  return {
    type: "outcome_evaluation",
    outcome_id: o.outcomeId,
    description: o.description,
    iteration: o.iteration,
    result: o.result === "needs_revision" ? "running" : o.result,
    explanation: o.explanation,
    completed_at: iso(o.completedAt),
  };
}

export function pageDto<T>(
  page: Page<T>,
  map: (item: T) => unknown,
): { data: unknown[]; next_page: string | null } {
  return { data: page.data.map(map), next_page: page.nextCursor };
}
