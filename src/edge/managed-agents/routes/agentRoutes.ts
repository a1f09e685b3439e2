import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import { agentDto, pageDto } from "../dto.js";
import { type ManagedAgentsDeps, toMs } from "../edgeDeps.js";
import {
  createAgentBodySchema,
  listAgentsQuerySchema,
  listAgentVersionsQuerySchema,
  retrieveAgentQuerySchema,
  updateAgentBodySchema,
} from "../schemas/agents.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";

type IdParams = { Params: { id: string }; Querystring: RawQuery };

export function agentRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post("/v1/agents", async (request) => {
    const body = parseBody(createAgentBodySchema, request.body);
    const { head, publication } = await deps.agents.create(principalOf(request).workspaceId, body);
    return agentDto(head, publication);
  });

  app.get<IdParams>("/v1/agents/:id", async (request) => {
    const query = parseQuery(retrieveAgentQuerySchema, request.query);
    const { head, publication } = await deps.agents.retrieve(
      principalOf(request).workspaceId,
      request.params.id,
      query.version,
    );
    return agentDto(head, publication);
  });

  app.post<IdParams>("/v1/agents/:id", async (request) => {
    const body = parseBody(updateAgentBodySchema, request.body ?? {});
    const { head, publication } = await deps.agents.update(
      principalOf(request).workspaceId,
      request.params.id,
      body,
    );
    return agentDto(head, publication);
  });

  app.get<{ Querystring: RawQuery }>("/v1/agents", async (request) => {
    const query = parseQuery(listAgentsQuerySchema, request.query);
    const page = await deps.agents.list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
      createdAt: { gte: toMs(query.created_at?.gte), lte: toMs(query.created_at?.lte) },
    });
    return pageDto(page, (item) => agentDto(item.head, item.latest));
  });

  app.post<IdParams>("/v1/agents/:id/archive", async (request) => {
    const { head, publication } = await deps.agents.archive(
      principalOf(request).workspaceId,
      request.params.id,
    );
    return agentDto(head, publication);
  });

  app.get<IdParams>("/v1/agents/:id/versions", async (request) => {
    const query = parseQuery(listAgentVersionsQuerySchema, request.query);
    const { head, page } = await deps.agents.listVersions(
      principalOf(request).workspaceId,
      request.params.id,
      {
        limit: query.limit,
        cursor: query.page ?? null,
      },
    );
    return pageDto(page, (publication) => agentDto(head, publication));
  });
}
