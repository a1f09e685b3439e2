import type { Actor } from "../../../control/adminAudit.js";
import { agentDto, pageDto } from "../dto.js";
import { type ManagedAgentsDeps, toMs } from "../edgeDeps.js";

/** What the agent operations use: Control's authoring service, in process or over the link. */
type AgentDeps = Pick<ManagedAgentsDeps, "agents">;

import {
  createAgentBodySchema,
  listAgentsQuerySchema,
  listAgentVersionsQuerySchema,
  retrieveAgentQuerySchema,
  updateAgentBodySchema,
} from "../schemas/agents.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";

// The agent operations of the Managed wire, transport-free: the HTTP routes and the in-process
// client both call these, so validation and projection have one home.

export async function createAgent(deps: AgentDeps, by: Actor, rawBody: unknown) {
  const body = parseBody(createAgentBodySchema, rawBody);
  const { head, publication } = await deps.agents.create(by, body);
  return agentDto(head, publication);
}

export async function retrieveAgent(
  deps: AgentDeps,
  workspaceId: string,
  agentId: string,
  rawQuery: RawQuery,
) {
  const query = parseQuery(retrieveAgentQuerySchema, rawQuery);
  const { head, publication } = await deps.agents.retrieve(workspaceId, agentId, query.version);
  return agentDto(head, publication);
}

export async function updateAgent(deps: AgentDeps, by: Actor, agentId: string, rawBody: unknown) {
  const body = parseBody(updateAgentBodySchema, rawBody ?? {});
  const { head, publication } = await deps.agents.update(by, agentId, body);
  return agentDto(head, publication);
}

export async function listAgents(deps: AgentDeps, workspaceId: string, rawQuery: RawQuery) {
  const query = parseQuery(listAgentsQuerySchema, rawQuery);
  const page = await deps.agents.list(workspaceId, {
    limit: query.limit,
    cursor: query.page ?? null,
    includeArchived: query.include_archived,
    createdAt: { gte: toMs(query.created_at?.gte), lte: toMs(query.created_at?.lte) },
  });
  return pageDto(page, (item) => agentDto(item.head, item.latest));
}

export async function archiveAgent(deps: AgentDeps, by: Actor, agentId: string) {
  const { head, publication } = await deps.agents.archive(by, agentId);
  return agentDto(head, publication);
}

export async function listAgentVersions(
  deps: AgentDeps,
  workspaceId: string,
  agentId: string,
  rawQuery: RawQuery,
) {
  const query = parseQuery(listAgentVersionsQuerySchema, rawQuery);
  const { head, page } = await deps.agents.listVersions(workspaceId, agentId, {
    limit: query.limit,
    cursor: query.page ?? null,
  });
  return pageDto(page, (publication) => agentDto(head, publication));
}
