import type { FastifyInstance } from "fastify";
import { principalOf } from "../../http/auth.js";
import { servicesFor } from "../../http/scopedServices.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { listEvents, threadStreamSubject } from "../operations/events.js";
import { archiveThread, listThreads, retrieveThread } from "../operations/threads.js";
import type { RawQuery } from "../schemas/common.js";
import { streamSession } from "../sessionStream.js";
import { SESSION_SCOPED } from "../sessionTokenAccess.js";

type SessionParams = { Params: { id: string }; Querystring: RawQuery };
type ThreadParams = { Params: { id: string; threadId: string }; Querystring: RawQuery };

/**
 * A session's threads (SDK `sessions.threads.*`). Reads are open to a session's work token like
 * the session's own retrieve and events; archiving is managing the session, for API keys only.
 */
export function threadRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.get<SessionParams>(
    "/v1/sessions/:id/threads",
    { config: { access: SESSION_SCOPED } },
    async (request) =>
      listThreads(
        servicesFor(deps, request),
        principalOf(request).workspaceId,
        request.params.id,
        request.query,
      ),
  );

  app.get<ThreadParams>(
    "/v1/sessions/:id/threads/:threadId",
    { config: { access: SESSION_SCOPED } },
    async (request) =>
      retrieveThread(
        servicesFor(deps, request),
        principalOf(request).workspaceId,
        request.params.id,
        request.params.threadId,
      ),
  );

  app.post<ThreadParams>("/v1/sessions/:id/threads/:threadId/archive", async (request) =>
    archiveThread(
      servicesFor(deps, request),
      principalOf(request).workspaceId,
      request.params.id,
      request.params.threadId,
    ),
  );

  app.get<ThreadParams>(
    "/v1/sessions/:id/threads/:threadId/events",
    { config: { access: SESSION_SCOPED } },
    async (request) =>
      listEvents(
        servicesFor(deps, request),
        principalOf(request).workspaceId,
        request.params.id,
        request.query,
        request.params.threadId,
      ),
  );

  app.get<ThreadParams>(
    "/v1/sessions/:id/threads/:threadId/stream",
    { config: { access: SESSION_SCOPED } },
    async (request, reply) => {
      const { session, deltaTypes } = await threadStreamSubject(
        servicesFor(deps, request),
        principalOf(request).workspaceId,
        request.params.id,
        request.params.threadId,
        request.query,
      );
      streamSession(
        request,
        reply,
        { tail: deps.tail, pingMs: deps.stream.pingMs, auth: deps },
        session,
        deltaTypes,
      );
    },
  );
}
