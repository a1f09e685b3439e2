import type { FastifyInstance } from "fastify";
import { decodeCommitted } from "../../../coordinator/factCodec.js";
import { principalOf } from "../../http/auth.js";
import { eventDto, pageDto } from "../dto.js";
import { type ManagedAgentsDeps, rangeMs } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import { listEventsQuerySchema, sendEventsBodySchema, streamEventsQuerySchema } from "../schemas/events.js";
import { sendDedupe } from "../sendDedupe.js";
import { streamSession } from "../sessionStream.js";
import { SESSION_SCOPED, sendPrecondition } from "../sessionTokenAccess.js";
import { toDomainInputs } from "./userInputs.js";

type IdParams = { Params: { id: string }; Querystring: RawQuery };

export function eventRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post<IdParams>("/v1/sessions/:id/events", { config: { access: SESSION_SCOPED } }, async (request) => {
    const body = parseBody(sendEventsBodySchema, request.body);
    const inputs = toDomainInputs(body.events);
    const echoed = await deps.sessions.send(principalOf(request).workspaceId, request.params.id, inputs, {
      dedupe: sendDedupe(request.headers, inputs),
      precondition: sendPrecondition(request),
    });
    return { data: echoed.map((fact) => eventDto(decodeCommitted(fact))) };
  });

  app.get<IdParams>("/v1/sessions/:id/events", { config: { access: SESSION_SCOPED } }, async (request) => {
    const q = parseQuery(listEventsQuerySchema, request.query);
    const session = await deps.sessions.get(principalOf(request).workspaceId, request.params.id);
    const page = await deps.stream.history.listEvents(session.id, session.threadId, {
      limit: q.limit,
      cursor: q.page ?? null,
      order: q.order,
      ...(q.types ? { types: [...q.types] } : {}),
      ...(q.created_at ? { createdAt: rangeMs(q.created_at) } : {}),
    });
    return pageDto(page, (fact) => eventDto(decodeCommitted(fact)));
  });

  app.get<IdParams>(
    "/v1/sessions/:id/events/stream",
    { config: { access: SESSION_SCOPED } },
    async (request, reply) => {
      const q = parseQuery(streamEventsQuerySchema, request.query);
      const session = await deps.sessions.get(principalOf(request).workspaceId, request.params.id);
      const stream = { tail: deps.tail, pingMs: deps.stream.pingMs };
      streamSession(request, reply, stream, session, new Set(q.event_deltas ?? []));
    },
  );
}
