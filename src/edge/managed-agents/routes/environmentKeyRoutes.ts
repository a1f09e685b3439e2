import type { FastifyInstance } from "fastify";
import { actorOf, principalOf, type RouteAccess } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { pageDto } from "../dto.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import { createEnvironmentKeyBodySchema, listEnvironmentKeysQuerySchema } from "../schemas/work.js";
import { environmentKeyDto } from "../selfHostedDto.js";

type EnvParams = { Params: { environment_id: string }; Querystring: RawQuery };
type KeyParams = { Params: { environment_id: string; key_id: string } };

/** Minting and revoking credentials is an administrator's act: an API key only. */
const ADMIN: RouteAccess = { accepts: ["api_key"] };

/**
 * Environment keys, an Awaken extension to the Managed Agents wire (no SDK endpoint mints them):
 * - `POST /v1/awaken/environments/{environment_id}/keys` `{name?}` → the key, shown only this once;
 * - `GET  /v1/awaken/environments/{environment_id}/keys` → the keys without the secret (`key_hint`);
 * - `POST /v1/awaken/environments/{environment_id}/keys/{key_id}/revoke` → the key with `revoked_at`.
 * Only self_hosted environments have keys. `awaken environment-keys` calls these over HTTP.
 */
export function environmentKeyRoutes(app: FastifyInstance, deps: EdgeServices): void {
  app.post<EnvParams>(
    "/v1/awaken/environments/:environment_id/keys",
    { config: { access: ADMIN } },
    async (request) => {
      const body = parseBody(createEnvironmentKeyBodySchema, request.body ?? {});
      const { record, key } = await deps.environmentKeys.create(
        actorOf(request),
        request.params.environment_id,
        body.name ?? null,
      );
      return environmentKeyDto(record, key);
    },
  );

  app.get<EnvParams>(
    "/v1/awaken/environments/:environment_id/keys",
    { config: { access: ADMIN } },
    async (request) => {
      const q = parseQuery(listEnvironmentKeysQuerySchema, request.query);
      const page = await deps.environmentKeys.list(
        principalOf(request).workspaceId,
        request.params.environment_id,
        {
          limit: q.limit,
          cursor: q.page ?? null,
        },
      );
      return pageDto(page, (k) => environmentKeyDto(k));
    },
  );

  app.post<KeyParams>(
    "/v1/awaken/environments/:environment_id/keys/:key_id/revoke",
    { config: { access: ADMIN } },
    async (request) =>
      environmentKeyDto(
        await deps.environmentKeys.revoke(
          actorOf(request),
          request.params.environment_id,
          request.params.key_id,
        ),
      ),
  );
}
