import type { FastifyInstance } from "fastify";
import { ACTION_URL_PATH } from "../../control/userProfiles.js";
import type { UserProfilesPort } from "./edgeServices.js";

/**
 * Where a user profile's action or enrollment URL lands: opened by the end customer, so it takes
 * no API key (the signed token is the credential, and the request log records the route pattern,
 * never the token). A self-hosted server runs no verification portal and no hosted program, so a
 * valid link says so and changes nothing; a forged, expired or deleted profile's link is a 404.
 */
export function userProfileActionRoutes(
  app: FastifyInstance,
  profiles: Pick<UserProfilesPort, "openActionUrl">,
): void {
  app.get<{ Querystring: { token?: string | string[] } }>(ACTION_URL_PATH, async (request, reply) => {
    reply.header("cache-control", "no-store");
    reply.header("referrer-policy", "no-referrer");
    const token = request.query.token;
    const claims = typeof token === "string" ? await profiles.openActionUrl(token) : null;
    if (!claims)
      return reply.status(404).send({
        type: "error",
        error: {
          type: "not_found_error",
          message: "This link is not valid: it expired, or was never issued here.",
        },
      });
    return {
      type: "user_profile_action",
      action: claims.action,
      user_profile_id: claims.userProfileId,
      expires_at: new Date(claims.expiresAt).toISOString(),
      status: "not_available",
      message:
        "This self-hosted server runs no verification portal or enrollment program: there is nothing to do here.",
    };
  });
}
