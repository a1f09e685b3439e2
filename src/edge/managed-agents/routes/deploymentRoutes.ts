import type { FastifyInstance } from "fastify";
import type { DeploymentService } from "../../../deployments/deploymentService.js";
import { AwakenError } from "../../../kernel/errors.js";
import { actorOf, principalOf } from "../../http/auth.js";
import { deploymentDto, deploymentRunDto } from "../deploymentDto.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { rangeMs, toMs } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createDeploymentBodySchema,
  listDeploymentRunsQuerySchema,
  listDeploymentsQuerySchema,
  updateDeploymentBodySchema,
} from "../schemas/deployments.js";

type IdParams = { Params: { deployment_id: string } };
type RunParams = { Params: { deployment_run_id: string } };

const agentOf = (agent: string | { id: string; version?: number | undefined }) =>
  typeof agent === "string" ? { id: agent } : { id: agent.id, version: agent.version };

/** Deployments and their runs (SDK `beta.deployments`, `beta.deploymentRuns`). */
export function deploymentRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const service = (): DeploymentService => {
    if (!deps.deployments) throw new AwakenError("not_found", "deployments are not served by this server");
    return deps.deployments;
  };
  const dto = (d: Parameters<typeof deploymentDto>[0]) => deploymentDto(d, service().clock.now());

  app.post("/v1/deployments", async (request) => {
    const body = parseBody(createDeploymentBodySchema, request.body);
    const created = await service().create(actorOf(request), {
      name: body.name,
      description: body.description || null,
      agent: agentOf(body.agent),
      environmentId: body.environment_id,
      initialEvents: body.initial_events,
      resources: body.resources ?? [],
      vaultIds: body.vault_ids ?? [],
      metadata: body.metadata ?? {},
      budget: body.budget ?? null,
      schedule: body.schedule
        ? { expression: body.schedule.expression, timezone: body.schedule.timezone }
        : null,
    });
    return dto(created);
  });

  app.get<IdParams>("/v1/deployments/:deployment_id", async (request) =>
    dto(await service().get(principalOf(request).workspaceId, request.params.deployment_id)),
  );

  app.post<IdParams>("/v1/deployments/:deployment_id", async (request) => {
    const body = parseBody(updateDeploymentBodySchema, request.body ?? {});
    const updated = await service().update(actorOf(request), request.params.deployment_id, {
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.agent !== undefined ? { agent: agentOf(body.agent) } : {}),
      ...(body.environment_id !== undefined ? { environmentId: body.environment_id } : {}),
      ...(body.initial_events !== undefined ? { initialEvents: body.initial_events } : {}),
      ...(body.resources !== undefined ? { resources: body.resources ?? [] } : {}),
      ...(body.vault_ids !== undefined ? { vaultIds: body.vault_ids ?? [] } : {}),
      ...(body.metadata !== undefined && body.metadata !== null ? { metadata: body.metadata } : {}),
      ...(body.budget !== undefined ? { budget: body.budget } : {}),
      ...(body.schedule !== undefined
        ? {
            schedule: body.schedule
              ? { expression: body.schedule.expression, timezone: body.schedule.timezone }
              : null,
          }
        : {}),
    });
    return dto(updated);
  });

  app.get<{ Querystring: RawQuery }>("/v1/deployments", async (request) => {
    const q = parseQuery(listDeploymentsQuerySchema, request.query);
    const page = await service().list(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
      includeArchived: q.include_archived === true,
      status: q.status ?? null,
      agentId: q.agent_id ?? null,
      createdAtGte: toMs(q.created_at?.gte) ?? null,
      createdAtLte: toMs(q.created_at?.lte) ?? null,
    });
    return pageDto(page, dto);
  });

  app.post<IdParams>("/v1/deployments/:deployment_id/archive", async (request) =>
    dto(await service().archive(actorOf(request), request.params.deployment_id)),
  );
  app.post<IdParams>("/v1/deployments/:deployment_id/pause", async (request) =>
    dto(await service().pause(actorOf(request), request.params.deployment_id)),
  );
  app.post<IdParams>("/v1/deployments/:deployment_id/unpause", async (request) =>
    dto(await service().unpause(actorOf(request), request.params.deployment_id)),
  );
  app.post<IdParams>("/v1/deployments/:deployment_id/run", async (request) =>
    deploymentRunDto(await service().runNow(actorOf(request), request.params.deployment_id)),
  );

  app.get<RunParams>("/v1/deployment_runs/:deployment_run_id", async (request) =>
    deploymentRunDto(
      await service().getRun(principalOf(request).workspaceId, request.params.deployment_run_id),
    ),
  );

  app.get<{ Querystring: RawQuery }>("/v1/deployment_runs", async (request) => {
    const q = parseQuery(listDeploymentRunsQuerySchema, request.query);
    const page = await service().listRuns(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
      deploymentId: q.deployment_id ?? null,
      hasError: q.has_error ?? null,
      triggerType: q.trigger_type ?? null,
      createdAt: rangeMs(q.created_at) ?? {},
    });
    return pageDto(page, deploymentRunDto);
  });
}
