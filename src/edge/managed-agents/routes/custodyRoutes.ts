import type { FastifyInstance } from "fastify";
import { principalOf, type RouteAccess } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { credentialOpenDto, credentialRevisionDto } from "../custodyDto.js";
import { pageDto } from "../dto.js";
import { parseQuery, type RawQuery } from "../schemas/common.js";
import { listCredentialOpensQuerySchema, listCredentialRevisionsQuerySchema } from "../schemas/custody.js";

type CredentialParams = { Params: { vault_id: string; credential_id: string }; Querystring: RawQuery };

const ADMIN: RouteAccess = { accepts: ["api_key"] };

/**
 * Credential custody, Awaken extensions for operators (admin keys, see `routeRoles.ts`):
 * - `GET /v1/awaken/vaults/{vault_id}/credentials/{credential_id}/revisions` → its revisions,
 *   newest first: the secret-free auth and the sealed fields' names, never the material;
 * - `GET /v1/awaken/credential_opens?credential_id=&session_id=` → the custody audit, newest first:
 *   which holder opened (or was refused) which credential revision for which session and run, when.
 * The audit outlives a deleted credential, so filtering by an unknown id answers an empty page.
 */
export function custodyRoutes(
  app: FastifyInstance,
  deps: Pick<EdgeServices, "credentials" | "credentialOpens">,
): void {
  app.get<CredentialParams>(
    "/v1/awaken/vaults/:vault_id/credentials/:credential_id/revisions",
    { config: { access: ADMIN } },
    async (request) => {
      const q = parseQuery(listCredentialRevisionsQuerySchema, request.query);
      const { vault_id, credential_id } = request.params;
      const page = await deps.credentials.listRevisions(
        principalOf(request).workspaceId,
        vault_id,
        credential_id,
        { limit: q.limit, cursor: q.page ?? null },
      );
      return pageDto(page, credentialRevisionDto);
    },
  );

  app.get<{ Querystring: RawQuery }>(
    "/v1/awaken/credential_opens",
    { config: { access: ADMIN } },
    async (request) => {
      const q = parseQuery(listCredentialOpensQuerySchema, request.query);
      const page = await deps.credentialOpens.list(principalOf(request).workspaceId, {
        limit: q.limit,
        cursor: q.page ?? null,
        credentialId: q.credential_id,
        sessionId: q.session_id,
      });
      return pageDto(page, credentialOpenDto);
    },
  );
}
