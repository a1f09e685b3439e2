import type { FastifyInstance, FastifyRequest } from "fastify";
import { scopeGrants } from "../../../control/callerScope.js";
import { AwakenError } from "../../../kernel/errors.js";
import { principalOf } from "../../http/auth.js";
import { scopeOfPrincipal, servicesFor } from "../../http/scopedServices.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  addSessionResourceBodySchema,
  listSessionResourcesQuerySchema,
  updateSessionResourceBodySchema,
} from "../schemas/sessionResources.js";
import { sessionResourceDto } from "../sessionResourceDto.js";

type SessionParams = { Params: { id: string }; Querystring: RawQuery };
type ResourceParams = { Params: { id: string; resource_id: string } };

/**
 * A session's resources (files, memory stores, repositories). The session is found through the
 * caller's scope first (one it does not reach is not found); changing them is managing the
 * session, which an access token may not do. A change reaches the session at its next run.
 */
export function sessionResourceRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const sessionResources = () => deps.resources.sessionResources;

  /** The caller's workspace, once the session is in its reach (and, to change it, its grant). */
  const reach = async (request: FastifyRequest, sessionId: string, change: boolean): Promise<string> => {
    const principal = principalOf(request);
    const scope = scopeOfPrincipal(principal);
    const session = await servicesFor(deps, request).sessions.get(principal.workspaceId, sessionId);
    if (!change) return principal.workspaceId;
    if (scope !== null && !scopeGrants(scope, "manage")) {
      throw new AwakenError(
        "permission_denied",
        "An access token cannot change a session's resources; an API key of the application's backend can.",
      );
    }
    // An archived session runs no more: nothing would ever realize the change.
    if (session.archivedAt !== null) {
      throw new AwakenError(
        "session_terminated",
        `session ${session.id} is archived; its resources can no longer be changed`,
      );
    }
    return principal.workspaceId;
  };

  app.post<SessionParams>("/v1/sessions/:id/resources", async (request) => {
    const body = parseBody(addSessionResourceBodySchema, request.body);
    const workspaceId = await reach(request, request.params.id, true);
    const added = await sessionResources().add(workspaceId, request.params.id, {
      type: "file",
      fileId: body.file_id,
      mountPath: body.mount_path ?? null,
    });
    return sessionResourceDto(added);
  });

  app.get<SessionParams>("/v1/sessions/:id/resources", async (request) => {
    const query = parseQuery(listSessionResourcesQuerySchema, request.query);
    const workspaceId = await reach(request, request.params.id, false);
    const page = await sessionResources().list(workspaceId, request.params.id, {
      limit: query.limit,
      cursor: query.page ?? null,
    });
    return pageDto(page, sessionResourceDto);
  });

  app.get<ResourceParams>("/v1/sessions/:id/resources/:resource_id", async (request) => {
    const workspaceId = await reach(request, request.params.id, false);
    return sessionResourceDto(
      await sessionResources().get(workspaceId, request.params.id, request.params.resource_id),
    );
  });

  app.post<ResourceParams>("/v1/sessions/:id/resources/:resource_id", async (request) => {
    const body = parseBody(updateSessionResourceBodySchema, request.body ?? {});
    const workspaceId = await reach(request, request.params.id, true);
    const updated = await sessionResources().update(
      workspaceId,
      request.params.id,
      request.params.resource_id,
      body.authorization_token,
    );
    return sessionResourceDto(updated);
  });

  app.delete<ResourceParams>("/v1/sessions/:id/resources/:resource_id", async (request) => {
    const workspaceId = await reach(request, request.params.id, true);
    const deleted = await sessionResources().delete(
      workspaceId,
      request.params.id,
      request.params.resource_id,
    );
    // A memory store resource is named by its store's id (it has no id of its own on the wire).
    return {
      id: deleted.type === "memory_store" ? deleted.memoryStoreId : deleted.id,
      type: "session_resource_deleted",
    };
  });
}
