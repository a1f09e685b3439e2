import type { FastifyInstance } from "fastify";
import { actorOf, principalOf } from "../../http/auth.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createCredentialBodySchema,
  createVaultBodySchema,
  listCredentialsQuerySchema,
  listVaultsQuerySchema,
  updateCredentialBodySchema,
  updateVaultBodySchema,
} from "../schemas/vaults.js";
import { credentialDto, validationDto, vaultDto } from "../vaultDto.js";

type VaultParams = { Params: { vault_id: string }; Querystring: RawQuery };
type CredentialParams = { Params: { vault_id: string; credential_id: string } };

/** Vaults and credentials (wire §2.7, §5). API key only, like every resource route. */
export function vaultRoutes(
  app: FastifyInstance,
  deps: Pick<ManagedAgentsDeps, "vaults" | "credentials">,
): void {
  const { vaults, credentials } = deps;

  app.post("/v1/vaults", async (request) => {
    const body = parseBody(createVaultBodySchema, request.body);
    const vault = await vaults.create(actorOf(request), {
      displayName: body.display_name,
      metadata: body.metadata ?? {},
    });
    return vaultDto(vault);
  });

  app.get<VaultParams>("/v1/vaults/:vault_id", async (request) =>
    vaultDto(await vaults.get(principalOf(request).workspaceId, request.params.vault_id)),
  );

  app.post<VaultParams>("/v1/vaults/:vault_id", async (request) => {
    const body = parseBody(updateVaultBodySchema, request.body ?? {});
    const vault = await vaults.update(actorOf(request), request.params.vault_id, {
      displayName: body.display_name,
      metadata: body.metadata,
    });
    return vaultDto(vault);
  });

  app.get<{ Querystring: RawQuery }>("/v1/vaults", async (request) => {
    const query = parseQuery(listVaultsQuerySchema, request.query);
    const page = await vaults.list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
    });
    return pageDto(page, vaultDto);
  });

  app.delete<VaultParams>("/v1/vaults/:vault_id", async (request) => {
    await vaults.delete(actorOf(request), request.params.vault_id);
    return { id: request.params.vault_id, type: "vault_deleted" };
  });

  app.post<VaultParams>("/v1/vaults/:vault_id/archive", async (request) =>
    vaultDto(await vaults.archive(actorOf(request), request.params.vault_id)),
  );

  app.post<VaultParams>("/v1/vaults/:vault_id/credentials", async (request) => {
    const body = parseBody(createCredentialBodySchema, request.body);
    const view = await credentials.create(actorOf(request), request.params.vault_id, {
      auth: body.auth,
      displayName: body.display_name ?? null,
      metadata: body.metadata ?? {},
    });
    return credentialDto(view);
  });

  app.get<CredentialParams>("/v1/vaults/:vault_id/credentials/:credential_id", async (request) => {
    const { vault_id, credential_id } = request.params;
    return credentialDto(
      await credentials.retrieve(principalOf(request).workspaceId, vault_id, credential_id),
    );
  });

  app.post<CredentialParams>("/v1/vaults/:vault_id/credentials/:credential_id", async (request) => {
    const { vault_id, credential_id } = request.params;
    const body = parseBody(updateCredentialBodySchema, request.body ?? {});
    const view = await credentials.update(actorOf(request), vault_id, credential_id, {
      auth: body.auth,
      displayName: body.display_name,
      metadata: body.metadata,
    });
    return credentialDto(view);
  });

  app.get<VaultParams>("/v1/vaults/:vault_id/credentials", async (request) => {
    const query = parseQuery(listCredentialsQuerySchema, request.query);
    const page = await credentials.list(principalOf(request).workspaceId, request.params.vault_id, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
    });
    return pageDto(page, credentialDto);
  });

  app.delete<CredentialParams>("/v1/vaults/:vault_id/credentials/:credential_id", async (request) => {
    const { vault_id, credential_id } = request.params;
    await credentials.delete(actorOf(request), vault_id, credential_id);
    return { id: credential_id, type: "vault_credential_deleted" };
  });

  app.post<CredentialParams>("/v1/vaults/:vault_id/credentials/:credential_id/archive", async (request) => {
    const { vault_id, credential_id } = request.params;
    return credentialDto(await credentials.archive(actorOf(request), vault_id, credential_id));
  });

  app.post<CredentialParams>(
    "/v1/vaults/:vault_id/credentials/:credential_id/mcp_oauth_validate",
    async (request) => {
      const { vault_id, credential_id } = request.params;
      return validationDto(
        await credentials.validate(principalOf(request).workspaceId, vault_id, credential_id),
      );
    },
  );
}
