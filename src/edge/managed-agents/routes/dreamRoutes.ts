import type { FastifyInstance, FastifyRequest } from "fastify";
import { AwakenError } from "../../../kernel/errors.js";
import { principalOf } from "../../http/auth.js";
import { dreamDto } from "../dreamDto.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { toMs } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import { createDreamBodySchema, listDreamsQuerySchema } from "../schemas/dreams.js";

type DreamParams = { Params: { dream_id: string }; Querystring: RawQuery };

/**
 * The workspace a dream acts in. A dream reads any session of the workspace and runs the dreamer
 * agent, so a key limited to some agents, or an access token, may not start one (it would read
 * past its reach); reads need no more than the route's role.
 */
function unscopedWorkspace(request: FastifyRequest): string {
  const principal = principalOf(request);
  if (
    principal.kind !== "api_key" ||
    principal.accessTokenId !== undefined ||
    principal.scope.agentIds !== null
  ) {
    throw new AwakenError(
      "permission_denied",
      "A dream reads any session of the workspace: it takes an API key that is not limited to some agents.",
    );
  }
  return principal.workspaceId;
}

/** Dreams (SDK `beta.dreams`). */
export function dreamRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const dreams = () => deps.dreams;

  app.post("/v1/dreams", async (request) => {
    const workspaceId = unscopedWorkspace(request);
    const body = parseBody(createDreamBodySchema, request.body);
    const inputs = body.inputs;
    const store = inputs.find((i) => i.type === "memory_store");
    const sessions = inputs.find((i) => i.type === "sessions");
    const view = await dreams().create(workspaceId, {
      memoryStoreId: store?.type === "memory_store" ? store.memory_store_id : "",
      sessionIds: sessions?.type === "sessions" ? sessions.session_ids : [],
      model: typeof body.model === "string" ? body.model : body.model.id,
      instructions: body.instructions ?? null,
      outputBehavior: body.output_behavior ?? { type: "create_new" },
    });
    return dreamDto(view);
  });

  app.get<DreamParams>("/v1/dreams/:dream_id", async (request) =>
    dreamDto(await dreams().get(principalOf(request).workspaceId, request.params.dream_id)),
  );

  app.get<{ Querystring: RawQuery }>("/v1/dreams", async (request) => {
    const query = parseQuery(listDreamsQuerySchema, request.query);
    const page = await dreams().list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
      statuses: query.statuses ?? null,
      createdAtGt: toMs(query.created_at?.gt) ?? null,
      createdAtLt: toMs(query.created_at?.lt) ?? null,
    });
    return pageDto(page, dreamDto);
  });

  app.post<DreamParams>("/v1/dreams/:dream_id/cancel", async (request) =>
    dreamDto(await dreams().cancel(unscopedWorkspace(request), request.params.dream_id)),
  );

  app.post<DreamParams>("/v1/dreams/:dream_id/archive", async (request) =>
    dreamDto(await dreams().archive(principalOf(request).workspaceId, request.params.dream_id)),
  );
}
