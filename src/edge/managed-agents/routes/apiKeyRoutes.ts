import type { FastifyInstance } from "fastify";
import type { ApiKeyRecord } from "../../../control/ports.js";
import { isoTime } from "../../../kernel/clock.js";
import { AwakenError } from "../../../kernel/errors.js";
import { principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { pageDto } from "../dto.js";
import { createApiKeyBodySchema, listApiKeysQuerySchema } from "../schemas/apiKeys.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";

type KeyParams = { Params: { key_id: string } };

/**
 * The workspace's API keys, an Awaken extension (admin keys only, see `routeRoles.ts`):
 * - `POST /v1/awaken/api_keys` `{role, label?, workspace_id?, agent_ids?}` → the key, shown only this once;
 * - `GET  /v1/awaken/api_keys` → the workspace's keys, never the keys themselves;
 * - `POST /v1/awaken/api_keys/{key_id}/revoke` → the key with `revoked_at`.
 * `awaken api-keys` calls these over HTTP.
 */
export function apiKeyRoutes(app: FastifyInstance, deps: Pick<EdgeServices, "iam">): void {
  app.post("/v1/awaken/api_keys", async (request) => {
    const body = parseBody(createApiKeyBodySchema, request.body ?? {});
    const by = apiKeyPrincipal(request);
    const { record, key } = await deps.iam.createApiKey(by, {
      role: body.role,
      label: body.label ?? null,
      workspaceId: body.workspace_id ?? null,
      agentIds: body.agent_ids ?? null,
    });
    return apiKeyDto(record, key);
  });

  app.get<{ Querystring: RawQuery }>("/v1/awaken/api_keys", async (request) => {
    const q = parseQuery(listApiKeysQuerySchema, request.query);
    const page = await deps.iam.listApiKeys(principalOf(request).workspaceId, {
      limit: q.limit,
      cursor: q.page ?? null,
    });
    return pageDto(page, (k) => apiKeyDto(k));
  });

  app.post<KeyParams>("/v1/awaken/api_keys/:key_id/revoke", async (request) => {
    const by = apiKeyPrincipal(request);
    if (request.params.key_id === by.apiKeyId) {
      throw new AwakenError(
        "invalid_request",
        "This request is signed with the key it would revoke; revoke it with another admin key, so one stays usable.",
      );
    }
    return apiKeyDto(
      await deps.iam.revokeApiKey({ workspaceId: by.workspaceId, actor: by.apiKeyId }, request.params.key_id),
    );
  });
}

function apiKeyPrincipal(request: Parameters<typeof principalOf>[0]) {
  const principal = principalOf(request);
  if (principal.kind !== "api_key")
    throw new AwakenError("permission_denied", "This route takes an API key.");
  return principal;
}

/** The key itself only in the creation answer; `key_hint` never shows more than it did then. */
function apiKeyDto(k: ApiKeyRecord, key?: string): Record<string, unknown> {
  return {
    id: k.id,
    type: "api_key",
    workspace_id: k.workspaceId,
    role: k.role,
    agent_ids: k.agentIds === null ? null : [...k.agentIds],
    label: k.label === "" ? null : k.label,
    ...(key !== undefined ? { key } : {}),
    created_at: isoTime(k.createdAt),
    revoked_at: k.revokedAt === null ? null : isoTime(k.revokedAt),
  };
}
