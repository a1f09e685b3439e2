import type { FastifyInstance } from "fastify";
import { actorOf, principalOf } from "../../http/auth.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import {
  archiveAgent,
  createAgent,
  listAgents,
  listAgentVersions,
  retrieveAgent,
  updateAgent,
} from "../operations/agents.js";
import type { RawQuery } from "../schemas/common.js";

type IdParams = { Params: { id: string }; Querystring: RawQuery };

export function agentRoutes(app: FastifyInstance, deps: Pick<ManagedAgentsDeps, "agents">): void {
  app.post("/v1/agents", async (request) => createAgent(deps, actorOf(request), request.body));

  app.get<IdParams>("/v1/agents/:id", async (request) =>
    retrieveAgent(deps, principalOf(request).workspaceId, request.params.id, request.query),
  );

  app.post<IdParams>("/v1/agents/:id", async (request) =>
    updateAgent(deps, actorOf(request), request.params.id, request.body),
  );

  app.get<{ Querystring: RawQuery }>("/v1/agents", async (request) =>
    listAgents(deps, principalOf(request).workspaceId, request.query),
  );

  app.post<IdParams>("/v1/agents/:id/archive", async (request) =>
    archiveAgent(deps, actorOf(request), request.params.id),
  );

  app.get<IdParams>("/v1/agents/:id/versions", async (request) =>
    listAgentVersions(deps, principalOf(request).workspaceId, request.params.id, request.query),
  );
}
