import type { FastifyInstance } from "fastify";
import { isoTime } from "../../../kernel/clock.js";
import { AwakenError } from "../../../kernel/errors.js";
import { principalOf } from "../../http/auth.js";
import type { EdgeServices } from "../../http/edgeServices.js";
import { servicesFor } from "../../http/scopedServices.js";
import { createAccessTokenBodySchema } from "../schemas/apiKeys.js";
import { parseBody } from "../schemas/common.js";

/** How long a token lives when the request does not say. */
const DEFAULT_TTL_S = 300;

/**
 * `POST /v1/awaken/access_tokens` `{operations, agent_ids?, session_id?, session_namespace?,
 * ttl_seconds?}`, an Awaken extension: a short-lived token an application's backend (holding any
 * API key) hands to a browser or mobile client, accepted by every edge where an API key is. It
 * never reaches further than the key that minted it; a session it is confined to must be one that
 * key reaches. A token confined to a session namespace (a prefix such as `user-42/`) reaches only
 * sessions bound to a client name under it, and creates sessions only under such a name.
 */
/**
 * Control's door has no sessions: a token confined to a session is minted through the coordinator,
 * which can check that the minter reaches it.
 */
export function accessTokenRoutes(
  app: FastifyInstance,
  deps: Pick<EdgeServices, "iam"> | EdgeServices,
): void {
  app.post("/v1/awaken/access_tokens", async (request) => {
    const body = parseBody(createAccessTokenBodySchema, request.body ?? {});
    const by = principalOf(request);
    if (by.kind !== "api_key") throw new AwakenError("permission_denied", "This route takes an API key.");
    if (by.accessTokenId !== undefined) {
      throw new AwakenError(
        "permission_denied",
        "An access token cannot mint access tokens; mint them with the application's API key.",
      );
    }
    const sessionId = body.session_id ?? null;
    const sessionNamespace = body.session_namespace ?? null;
    if (sessionId !== null && sessionNamespace !== null) {
      throw new AwakenError(
        "invalid_request",
        "session_namespace: a token is confined to one session (session_id) or to a namespace of session names (session_namespace), not both; leave one out.",
      );
    }
    if (sessionId !== null) {
      if (!("sessions" in deps)) {
        throw new AwakenError(
          "invalid_request",
          "session_id: a token confined to a session is minted through the coordinator's URL, which holds the sessions; Control's own URL cannot check it.",
        );
      }
      // Through the minter's own scope: a session it cannot reach is not found.
      const session = await servicesFor(deps, request).sessions.get(by.workspaceId, sessionId);
      if (body.agent_ids && !body.agent_ids.includes(session.agent.agentId)) {
        throw new AwakenError(
          "invalid_request",
          `session_id: the session runs agent ${session.agent.agentId}, which agent_ids leaves out.`,
        );
      }
    }
    const { token, claims } = await deps.iam.mintAccessToken(by, {
      operations: body.operations,
      agentIds: body.agent_ids ?? null,
      sessionId,
      sessionNamespace,
      ttlSeconds: body.ttl_seconds ?? DEFAULT_TTL_S,
    });
    return {
      id: claims.id,
      type: "access_token",
      token,
      workspace_id: claims.workspaceId,
      api_key_id: claims.keyId,
      operations: [...claims.operations],
      agent_ids: claims.agentIds === null ? null : [...claims.agentIds],
      session_id: claims.sessionId,
      session_namespace: claims.sessionNamespace,
      created_at: isoTime(claims.issuedAt),
      expires_at: isoTime(claims.expiresAt),
    };
  });
}
