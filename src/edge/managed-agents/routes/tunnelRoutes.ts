import type { FastifyInstance } from "fastify";
import { actorOf, principalOf } from "../../http/auth.js";
import { pageDto } from "../dto.js";
import type { ManagedAgentsDeps } from "../edgeDeps.js";
import { parseBody, parseQuery, type RawQuery } from "../schemas/common.js";
import {
  createTunnelBodySchema,
  createTunnelCertificateBodySchema,
  emptyBodySchema,
  listTunnelsQuerySchema,
  rotateTunnelTokenBodySchema,
} from "../schemas/tunnels.js";
import { tunnelCertificateDto, tunnelDto, tunnelTokenDto } from "../tunnelDto.js";

type TunnelParams = { Params: { tunnel_id: string }; Querystring: RawQuery };
type CertificateParams = { Params: { tunnel_id: string; certificate_id: string } };

/**
 * MCP tunnels and their CA certificates (SDK `beta.tunnels`). Admin only (unlisted in
 * routeRoles.ts): a tunnel's token carries traffic into a private network and its certificates
 * decide which servers there are trusted, so neither is a builder's to mint, read or change.
 */
export function tunnelRoutes(app: FastifyInstance, deps: ManagedAgentsDeps): void {
  // Read per request: registering the edge needs no services (route-table tests register it bare).
  const tunnels = () => deps.tunnels;

  app.post("/v1/tunnels", async (request) => {
    const body = parseBody(createTunnelBodySchema, request.body ?? {});
    return tunnelDto(await tunnels().create(actorOf(request), { displayName: body.display_name ?? null }));
  });

  app.get<TunnelParams>("/v1/tunnels/:tunnel_id", async (request) =>
    tunnelDto(await tunnels().get(principalOf(request).workspaceId, request.params.tunnel_id)),
  );

  app.get<{ Querystring: RawQuery }>("/v1/tunnels", async (request) => {
    const query = parseQuery(listTunnelsQuerySchema, request.query);
    const page = await tunnels().list(principalOf(request).workspaceId, {
      limit: query.limit,
      cursor: query.page ?? null,
      includeArchived: query.include_archived,
    });
    return pageDto(page, tunnelDto);
  });

  app.post<TunnelParams>("/v1/tunnels/:tunnel_id/archive", async (request) => {
    parseBody(emptyBodySchema, request.body ?? {});
    return tunnelDto(await tunnels().archive(actorOf(request), request.params.tunnel_id));
  });

  // POST, so the token never appears in an intermediary's access log (SDK).
  app.post<TunnelParams>("/v1/tunnels/:tunnel_id/reveal_token", async (request) => {
    parseBody(emptyBodySchema, request.body ?? {});
    return tunnelTokenDto(await tunnels().revealToken(actorOf(request), request.params.tunnel_id));
  });

  app.post<TunnelParams>("/v1/tunnels/:tunnel_id/rotate_token", async (request) => {
    const body = parseBody(rotateTunnelTokenBodySchema, request.body ?? {});
    const rotated = await tunnels().rotateToken(
      actorOf(request),
      request.params.tunnel_id,
      body.reason ?? null,
    );
    return tunnelTokenDto(rotated);
  });

  app.post<TunnelParams>("/v1/tunnels/:tunnel_id/certificates", async (request) => {
    const body = parseBody(createTunnelCertificateBodySchema, request.body);
    const certificate = await tunnels().addCertificate(
      actorOf(request),
      request.params.tunnel_id,
      body.ca_certificate_pem,
    );
    return tunnelCertificateDto(certificate);
  });

  app.get<CertificateParams>("/v1/tunnels/:tunnel_id/certificates/:certificate_id", async (request) => {
    const { tunnel_id, certificate_id } = request.params;
    const workspaceId = principalOf(request).workspaceId;
    return tunnelCertificateDto(await tunnels().getCertificate(workspaceId, tunnel_id, certificate_id));
  });

  app.get<TunnelParams>("/v1/tunnels/:tunnel_id/certificates", async (request) => {
    const query = parseQuery(listTunnelsQuerySchema, request.query);
    const page = await tunnels().listCertificates(
      principalOf(request).workspaceId,
      request.params.tunnel_id,
      {
        limit: query.limit,
        cursor: query.page ?? null,
        includeArchived: query.include_archived,
      },
    );
    return pageDto(page, tunnelCertificateDto);
  });

  app.post<CertificateParams>(
    "/v1/tunnels/:tunnel_id/certificates/:certificate_id/archive",
    async (request) => {
      parseBody(emptyBodySchema, request.body ?? {});
      const { tunnel_id, certificate_id } = request.params;
      return tunnelCertificateDto(
        await tunnels().archiveCertificate(actorOf(request), tunnel_id, certificate_id),
      );
    },
  );
}
