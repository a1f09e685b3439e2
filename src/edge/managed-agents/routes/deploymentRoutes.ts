import type { FastifyInstance, FastifyRequest } from "fastify";
import { scopeReachesAgent } from "../../../control/callerScope.js";
import type { DeploymentService } from "../../../deployments/deploymentService.js";
import type { DeploymentRecord } from "../../../deployments/ports.js";
import { AwakenError, notFound } from "../../../kernel/errors.js";
import { actorOf, principalOf } from "../../http/auth.js";
import { scopeOfPrincipal } from "../../http/scopedServices.js";
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

/**
 * The agents a caller's deployments and runs may be of, by the one rule of `callerScope.ts`: a key
 * with an agent allow-list reaches those agents' only; an access token, confined to sessions, none
 * (a run names a session outside its reach). null: every agent. Outside the reach is absent: a
 * 404, or no rows, as an unknown id would be.
 */
function reachOf(request: FastifyRequest): readonly string[] | null {
  const scope = scopeOfPrincipal(principalOf(request));
  if (scope === null) return null;
  if (scope.operations !== null || scope.sessionId !== null || scope.sessionNamespace !== null) return [];
  return scope.agentIds;
}

function reaches(request: FastifyRequest, agentId: string): boolean {
  const scope = scopeOfPrincipal(principalOf(request));
  const agentIds = reachOf(request);
  return (
    scope === null || (agentIds === null ? scopeReachesAgent(scope, agentId) : agentIds.includes(agentId))
  );
}

/** Deployments and their runs (SDK `beta.deployments`, `beta.deploymentRuns`). */
export function deploymentRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const service = (): DeploymentService => {
    if (!deps.deployments) throw new AwakenError("not_found", "deployments are not served by this server");
    return deps.deployments;
  };
  const dto = (d: DeploymentRecord) => deploymentDto(d, service().clock.now());
  /** The deployment, when the caller reaches its agent; a 404 otherwise. */
  const reachable = async (request: FastifyRequest, id: string) => {
    const deployment = await service().get(principalOf(request).workspaceId, id);
    if (!reaches(request, deployment.agent.id)) throw notFound("deployment", id);
    return deployment;
  };
  const reachAgent = (request: FastifyRequest, agent: Parameters<typeof agentOf>[0] | undefined) => {
    if (agent !== undefined && !reaches(request, agentOf(agent).id))
      throw notFound("agent", agentOf(agent).id);
  };

  app.post("/v1/deployments", async (request) => {
    const body = parseBody(createDeploymentBodySchema, request.body);
    reachAgent(request, body.agent);
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
    dto(await reachable(request, request.params.deployment_id)),
  );

  app.post<IdParams>("/v1/deployments/:deployment_id", async (request) => {
    const body = parseBody(updateDeploymentBodySchema, request.body ?? {});
    await reachable(request, request.params.deployment_id);
    reachAgent(request, body.agent);
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
      agentIds: reachOf(request),
      createdAtGte: toMs(q.created_at?.gte) ?? null,
      createdAtLte: toMs(q.created_at?.lte) ?? null,
    });
    return pageDto(page, dto);
  });

  // Pause, unpause, archive and run now: each on a deployment the caller reaches.
  const lifecycle = {
    archive: (s: DeploymentService) => s.archive.bind(s),
    pause: (s: DeploymentService) => s.pause.bind(s),
    unpause: (s: DeploymentService) => s.unpause.bind(s),
  } as const;
  for (const [verb, method] of Object.entries(lifecycle)) {
    app.post<IdParams>(`/v1/deployments/:deployment_id/${verb}`, async (request) => {
      await reachable(request, request.params.deployment_id);
      return dto(await method(service())(actorOf(request), request.params.deployment_id));
    });
  }
  app.post<IdParams>("/v1/deployments/:deployment_id/run", async (request) => {
    await reachable(request, request.params.deployment_id);
    return deploymentRunDto(await service().runNow(actorOf(request), request.params.deployment_id));
  });

  app.get<RunParams>("/v1/deployment_runs/:deployment_run_id", async (request) => {
    const id = request.params.deployment_run_id;
    const run = await service().getRun(principalOf(request).workspaceId, id);
    if (!reaches(request, run.agent.id)) throw notFound("deployment run", id);
    return deploymentRunDto(run);
  });

  app.get<{ Querystring: RawQuery }>("/v1/deployment_runs", async (request) => {
    const q = parseQuery(listDeploymentRunsQuerySchema, request.query);
    const page = await service().listRuns(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
      deploymentId: q.deployment_id ?? null,
      agentIds: reachOf(request),
      hasError: q.has_error ?? null,
      triggerType: q.trigger_type ?? null,
      createdAt: rangeMs(q.created_at) ?? {},
    });
    return pageDto(page, deploymentRunDto);
  });
}
