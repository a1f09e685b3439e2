import type { FastifyInstance } from "fastify";
import type { AgentRef } from "../../../coordinator/sessionEntry.js";
import { invalid } from "../../../kernel/errors.js";
import type { JsonObject } from "../../../kernel/json.js";
import { principalOf } from "../../http/auth.js";
import { sessionDto } from "../dto.js";
import { type ManagedAgentsDeps, rangeMs } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  type CreateSessionBody,
  createSessionBodySchema,
  listSessionsQuerySchema,
  updateSessionBodySchema,
} from "../schemas/sessions.js";
import { SESSION_SCOPED } from "../sessionTokenAccess.js";
import { toDomainInputs } from "./userInputs.js";

type IdParams = { Params: { id: string } };

export function sessionRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  app.post("/v1/sessions", async (request) => {
    const body = parseBody(createSessionBodySchema, request.body);
    const session = await deps.entry.start({
      workspaceId: principalOf(request).workspaceId,
      agent: agentRef(body.agent),
      // Required on this wire (the schema says so); only other edges lean on the default.
      environmentId: body.environment_id,
      title: body.title ?? null,
      metadata: body.metadata ?? {},
      resources: body.resources ?? [],
      vaultIds: body.vault_ids ?? [],
      budget: body.budget ?? null,
      initialInputs: toDomainInputs(body.initial_events ?? []),
    });
    return sessionDto(session, deps.clock.now());
  });

  app.get<IdParams>("/v1/sessions/:id", { config: { access: SESSION_SCOPED } }, async (request) =>
    sessionDto(
      await deps.sessions.get(principalOf(request).workspaceId, request.params.id),
      deps.clock.now(),
    ),
  );

  app.get<{ Querystring: RawQuery }>("/v1/sessions", async (request) => {
    const q = parseQuery(listSessionsQuerySchema, request.query);
    const page = await deps.sessions.list(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
      order: q.order,
      includeArchived: q.include_archived,
      ...(q.agent_id ? { agentId: q.agent_id } : {}),
      ...(q.agent_version !== undefined ? { agentVersion: q.agent_version } : {}),
      ...(q.statuses ? { statuses: q.statuses } : {}),
      ...(q.created_at ? { createdAt: rangeMs(q.created_at) } : {}),
    });
    const now = deps.clock.now();
    return {
      data: page.data.map((s) => sessionDto(s, now)),
      next_page: page.nextCursor,
      prev_page: page.prevCursor ?? null,
    };
  });

  app.post<IdParams>("/v1/sessions/:id", async (request) => {
    const body = parseBody(updateSessionBodySchema, request.body ?? {});
    if (body.vault_ids !== undefined) {
      throw invalid(
        "vault_ids: vaults are attached when a session is created and cannot be changed afterwards",
      );
    }
    if (body.agent !== undefined)
      throw invalid("agent: changing a session's agent tools is not supported yet");
    const session = await deps.sessions.update(principalOf(request).workspaceId, request.params.id, {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
      ...(body.budget !== undefined ? { budget: body.budget } : {}),
    });
    return sessionDto(session, deps.clock.now());
  });

  app.delete<IdParams>("/v1/sessions/:id", async (request) => {
    await deps.sessions.delete(principalOf(request).workspaceId, request.params.id);
    return { id: request.params.id, type: "session_deleted" };
  });

  app.post<IdParams>("/v1/sessions/:id/archive", async (request) =>
    sessionDto(
      await deps.sessions.archive(principalOf(request).workspaceId, request.params.id),
      deps.clock.now(),
    ),
  );
}

/** The wire's agent reference: an id (latest), `{type:"agent"}`, or `agent_with_overrides`. */
function agentRef(ref: CreateSessionBody["agent"]): AgentRef {
  if (typeof ref === "string") return { id: ref };
  const version = ref.version ?? undefined;
  if (ref.type !== "agent_with_overrides")
    return { id: ref.id, ...(version !== undefined ? { version } : {}) };
  const { type: _type, id, version: _version, ...overrides } = ref;
  return { id, ...(version !== undefined ? { version } : {}), overrides: overrides as JsonObject };
}
