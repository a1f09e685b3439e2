import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import { environmentDto, pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createEnvironmentBodySchema,
  listEnvironmentsQuerySchema,
  updateEnvironmentBodySchema,
} from "../schemas/environments.js";

type IdParams = { Params: { id: string } };

export function environmentRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post("/v1/environments", async (request) => {
    const body = parseBody(createEnvironmentBodySchema, request.body);
    const env = await deps.environments.create(principalOf(request).workspaceId, {
      name: body.name,
      description: body.description ?? null,
      scope: body.scope ?? null,
      metadata: body.metadata ?? {},
      config: body.config,
    });
    return environmentDto(env);
  });

  app.get<IdParams>("/v1/environments/:id", async (request) =>
    environmentDto(await deps.environments.get(principalOf(request).workspaceId, request.params.id)),
  );

  app.post<IdParams>("/v1/environments/:id", async (request) => {
    const body = parseBody(updateEnvironmentBodySchema, request.body ?? {});
    const env = await deps.environments.update(principalOf(request).workspaceId, request.params.id, {
      ...(body.name ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.scope ? { scope: body.scope } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
      config: body.config ?? null,
    });
    return environmentDto(env);
  });

  app.get<{ Querystring: RawQuery }>("/v1/environments", async (request) => {
    const query = parseQuery(listEnvironmentsQuerySchema, request.query);
    const page = await deps.environments.list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
    });
    return pageDto(page, environmentDto);
  });

  app.delete<IdParams>("/v1/environments/:id", async (request) => {
    await deps.environments.delete(principalOf(request).workspaceId, request.params.id);
    return { id: request.params.id, type: "environment_deleted" };
  });

  app.post<IdParams>("/v1/environments/:id/archive", async (request) =>
    environmentDto(await deps.environments.archive(principalOf(request).workspaceId, request.params.id)),
  );
}
