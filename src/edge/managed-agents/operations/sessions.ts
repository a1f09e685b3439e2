import type { OutcomeState } from "../../../coordinator/outcomes.js";
import type { SessionRecord } from "../../../coordinator/ports.js";
import type { AgentRef } from "../../../coordinator/sessionEntry.js";
import { invalid } from "../../../kernel/errors.js";
import type { JsonObject } from "../../../kernel/json.js";
import { sessionDto } from "../dto.js";
import { type ManagedAgentsDeps, rangeMs } from "../edgeDeps.js";
import { readRubricFiles, rubricFileReader } from "../outcomeRubrics.js";
import { toDomainInputs } from "../routes/userInputs.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import { toResourceRequest } from "../schemas/sessionResources.js";
import {
  type CreateSessionBody,
  createSessionBodySchema,
  listSessionsQuerySchema,
  updateSessionBodySchema,
} from "../schemas/sessions.js";

// The session operations of the Managed wire, transport-free (HTTP routes and in-process client).

/** Sessions on the wire, each with its resources (one read for a whole page). */
async function sessionDtos(deps: ManagedAgentsDeps, workspaceId: string, sessions: readonly SessionRecord[]) {
  const ids = sessions.map((s) => s.id);
  const [resources, outcomes, deployments] = await Promise.all([
    deps.resources.sessionResources.listForSessions(
      workspaceId,
      sessions.map((s) => s.id),
    ),
    // Projected from each thread's committed facts (one read for the page).
    deps.stream.history.outcomes?.(sessions.map((s) => s.threadId)) ?? new Map<string, OutcomeState[]>(),
    deps.deployments?.deploymentsOfSessions(workspaceId, ids) ?? new Map<string, string>(),
  ]);
  const now = deps.clock.now();
  return sessions.map((s) =>
    sessionDto(
      s,
      now,
      resources.get(s.id) ?? [],
      outcomes.get(s.threadId) ?? [],
      deployments.get(s.id) ?? null,
    ),
  );
}

async function oneSessionDto(deps: ManagedAgentsDeps, workspaceId: string, session: SessionRecord) {
  const [dto] = await sessionDtos(deps, workspaceId, [session]);
  return dto;
}

export async function createSession(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  rawBody: unknown,
  /** The profile the request named (`anthropic-user-profile-id`), checked live; null: none. */
  userProfileId: string | null = null,
) {
  const body = parseBody(createSessionBodySchema, rawBody);
  const session = await deps.entry.start({
    workspaceId,
    userProfileId,
    agent: agentRef(body.agent),
    // Required on this wire (the schema says so); only other edges lean on the default.
    environmentId: body.environment_id,
    title: body.title ?? null,
    metadata: body.metadata ?? {},
    resources: (body.resources ?? []).map(toResourceRequest),
    vaultIds: body.vault_ids ?? [],
    budget: body.budget ?? null,
    // The session does not exist yet: a rubric file scoped to a session cannot be its.
    initialInputs: toDomainInputs(
      body.initial_events ?? [],
      await readRubricFiles(body.initial_events ?? [], rubricFileReader(deps, workspaceId, null)),
    ),
  });
  // A session made without resources or outcomes has none yet: nothing to read back.
  const definesOutcome = body.initial_events?.some((e) => e.type === "user.define_outcome") ?? false;
  if (!body.resources?.length && !definesOutcome) return sessionDto(session, deps.clock.now(), []);
  return oneSessionDto(deps, workspaceId, session);
}

export async function retrieveSession(deps: ManagedAgentsDeps, workspaceId: string, id: string) {
  return oneSessionDto(deps, workspaceId, await deps.sessions.get(workspaceId, id));
}

export async function listSessions(deps: ManagedAgentsDeps, workspaceId: string, rawQuery: RawQuery) {
  const q = parseQuery(listSessionsQuerySchema, rawQuery);
  const page = await deps.sessions.list(workspaceId, {
    limit: q.limit,
    cursor: q.page ?? null,
    order: q.order,
    includeArchived: q.include_archived,
    ...(q.agent_id ? { agentId: q.agent_id } : {}),
    ...(q.agent_version !== undefined ? { agentVersion: q.agent_version } : {}),
    ...(q.memory_store_id !== undefined ? { memoryStoreId: q.memory_store_id } : {}),
    ...(q.deployment_id !== undefined ? { deploymentId: q.deployment_id } : {}),
    ...(q.statuses ? { statuses: q.statuses } : {}),
    ...(q.created_at ? { createdAt: rangeMs(q.created_at) } : {}),
  });
  return {
    data: await sessionDtos(deps, workspaceId, page.data),
    next_page: page.nextCursor,
    prev_page: page.prevCursor ?? null,
  };
}

export async function updateSession(
  deps: ManagedAgentsDeps,
  workspaceId: string,
  id: string,
  rawBody: unknown,
) {
  const body = parseBody(updateSessionBodySchema, rawBody ?? {});
  if (body.vault_ids !== undefined) {
    throw invalid(
      "vault_ids: vaults are attached when a session is created and cannot be changed afterwards",
    );
  }
  if (body.agent !== undefined) throw invalid("agent: changing a session's agent tools is not supported yet");
  const session = await deps.sessions.update(workspaceId, id, {
    ...(body.title !== undefined ? { title: body.title } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(body.budget !== undefined ? { budget: body.budget } : {}),
  });
  return oneSessionDto(deps, workspaceId, session);
}

export async function deleteSession(deps: ManagedAgentsDeps, workspaceId: string, id: string) {
  await deps.sessions.delete(workspaceId, id);
  return { id, type: "session_deleted" };
}

export async function archiveSession(deps: ManagedAgentsDeps, workspaceId: string, id: string) {
  return oneSessionDto(deps, workspaceId, await deps.sessions.archive(workspaceId, id));
}

/** The wire's agent reference: an id (latest), `{type:"agent"}`, or `agent_with_overrides`. */
function agentRef(ref: CreateSessionBody["agent"]): AgentRef {
  if (typeof ref === "string") return { id: ref };
  const version = ref.version ?? undefined;
  if (ref.type !== "agent_with_overrides")
    return { id: ref.id, ...(version !== undefined ? { version } : {}) };
  const { type: _type, id, version: _version, ...overrides } = ref;
  return { id, ...(version !== undefined ? { version } : {}), overrides: overrides as JsonObject };
}
