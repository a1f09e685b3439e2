import type { FastifyInstance } from "fastify";
import { actorOf, principalOf } from "../../http/auth.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import {
  archiveEnvironment,
  createEnvironment,
  deleteEnvironment,
  listEnvironments,
  rebuildEnvironmentImage,
  retrieveEnvironment,
  updateEnvironment,
} from "../operations/environments.js";
import type { RawQuery } from "../schemas/common.js";

type IdParams = { Params: { id: string } };

export function environmentRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post("/v1/environments", async (request) => createEnvironment(deps, actorOf(request), request.body));

  app.get<IdParams>("/v1/environments/:id", async (request) =>
    retrieveEnvironment(deps, principalOf(request).workspaceId, request.params.id),
  );

  app.post<IdParams>("/v1/environments/:id", async (request) =>
    updateEnvironment(deps, actorOf(request), request.params.id, request.body),
  );

  app.get<{ Querystring: RawQuery }>("/v1/environments", async (request) =>
    listEnvironments(deps, principalOf(request).workspaceId, request.query),
  );

  app.delete<IdParams>("/v1/environments/:id", async (request) =>
    deleteEnvironment(deps, actorOf(request), request.params.id),
  );

  // Awaken extension: retries a failed image build of the environment's current revision.
  app.post<{ Params: { environment_id: string } }>(
    "/v1/awaken/environments/:environment_id/image/rebuild",
    async (request) =>
      rebuildEnvironmentImage(deps, principalOf(request).workspaceId, request.params.environment_id),
  );

  app.post<IdParams>("/v1/environments/:id/archive", async (request) =>
    archiveEnvironment(deps, actorOf(request), request.params.id),
  );
}
