import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { listEvents, sendEvents, streamSubject } from "../operations/events.js";
import type { RawQuery } from "../schemas/common.js";
import { streamSession } from "../sessionStream.js";
import { SESSION_SCOPED, sendPrecondition } from "../sessionTokenAccess.js";
import { assertAttributedTo, requestUserProfile } from "../userProfileHeader.js";

type IdParams = { Params: { id: string }; Querystring: RawQuery };

export function eventRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post<IdParams>("/v1/sessions/:id/events", { config: { access: SESSION_SCOPED } }, async (request) => {
    const { workspaceId } = principalOf(request);
    const services = servicesFor(deps, request);
    const userProfileId = await requestUserProfile(request, workspaceId, deps.userProfiles);
    if (userProfileId !== null)
      await assertAttributedTo(services, workspaceId, request.params.id, userProfileId);
    return sendEvents(services, workspaceId, request.params.id, request.body, {
      headers: request.headers,
      precondition: sendPrecondition(request),
    });
  });

  app.get<IdParams>("/v1/sessions/:id/events", { config: { access: SESSION_SCOPED } }, async (request) =>
    listEvents(
      servicesFor(deps, request),
      principalOf(request).workspaceId,
      request.params.id,
      request.query,
    ),
  );

  app.get<IdParams>(
    "/v1/sessions/:id/events/stream",
    { config: { access: SESSION_SCOPED } },
    async (request, reply) => {
      const { session, threadVersion, deltaTypes } = await streamSubject(
        servicesFor(deps, request),
        principalOf(request).workspaceId,
        request.params.id,
        request.query,
      );
      streamSession(
        request,
        reply,
        { tail: deps.tail, pingMs: deps.stream.pingMs, auth: deps },
        session,
        deltaTypes,
        threadVersion,
      );
    },
  );
}
