import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import {
  archiveSession,
  createSession,
  deleteSession,
  listSessions,
  retrieveSession,
  updateSession,
} from "../operations/sessions.js";
import type { RawQuery } from "../schemas/common.js";
import { SESSION_SCOPED } from "../sessionTokenAccess.js";
import { requestUserProfile } from "../userProfileHeader.js";

type IdParams = { Params: { id: string } };

export function sessionRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post("/v1/sessions", async (request) => {
    const { workspaceId } = principalOf(request);
    // Checked before the body: a request naming a profile it cannot reach writes nothing.
    const userProfileId = await requestUserProfile(request, workspaceId, deps.userProfiles);
    return createSession(servicesFor(deps, request), workspaceId, request.body, userProfileId);
  });

  app.get<IdParams>("/v1/sessions/:id", { config: { access: SESSION_SCOPED } }, async (request) =>
    retrieveSession(servicesFor(deps, request), principalOf(request).workspaceId, request.params.id),
  );

  app.get<{ Querystring: RawQuery }>("/v1/sessions", async (request) =>
    listSessions(servicesFor(deps, request), principalOf(request).workspaceId, request.query),
  );

  app.post<IdParams>("/v1/sessions/:id", async (request) =>
    updateSession(
      servicesFor(deps, request),
      principalOf(request).workspaceId,
      request.params.id,
      request.body,
    ),
  );

  app.delete<IdParams>("/v1/sessions/:id", async (request) =>
    deleteSession(servicesFor(deps, request), principalOf(request).workspaceId, request.params.id),
  );

  app.post<IdParams>("/v1/sessions/:id/archive", async (request) =>
    archiveSession(servicesFor(deps, request), principalOf(request).workspaceId, request.params.id),
  );
}
