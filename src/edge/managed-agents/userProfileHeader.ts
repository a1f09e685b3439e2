import type { FastifyRequest } from "fastify";
import { isUserProfileId, userProfileNotFound } from "../../control/userProfiles.js";
import { invalid } from "../../kernel/errors.js";
import type { EdgeServices, UserProfilesPort } from "../http/edgeServices.js";

/** The header the SDK sends a profile's id in (`user_profile_id` params, or `headers` on any call). */
export const USER_PROFILE_HEADER = "anthropic-user-profile-id";

/**
 * The live profile of the caller's workspace a request names, or null when it names none. A
 * repeated or malformed header is a 400; an unknown, deleted or another workspace's profile is
 * `user_profile_not_found` (400), so a request is never attributed to a profile it cannot reach.
 */
export async function requestUserProfile(
  request: FastifyRequest,
  workspaceId: string,
  profiles: Pick<UserProfilesPort, "requireActive">,
): Promise<string | null> {
  const value = request.headers[USER_PROFILE_HEADER];
  if (value === undefined) return null;
  if (typeof value !== "string") throw invalid(`${USER_PROFILE_HEADER}: send the header once`);
  if (!isUserProfileId(value)) {
    if (value.length > 128 || !/^[\x20-\x7e]*$/.test(value))
      throw invalid(`${USER_PROFILE_HEADER}: expected a user profile id (uprof_…)`);
    throw userProfileNotFound(value);
  }
  return profiles.requireActive(workspaceId, value);
}

/**
 * A message sent naming a profile must be sent to a session attributed to that profile at
 * creation: a session's data subject does not change once content is captured under it, so a
 * send cannot re-attribute it (a 400 says which profile, if any, the session has).
 */
export async function assertAttributedTo(
  services: Pick<EdgeServices, "sessions">,
  workspaceId: string,
  sessionId: string,
  userProfileId: string,
): Promise<void> {
  const session = await services.sessions.get(workspaceId, sessionId);
  const attributed = session.userProfileId ?? null;
  if (attributed === userProfileId) return;
  throw invalid(
    attributed === null
      ? `${USER_PROFILE_HEADER}: session ${sessionId} is attributed to no user profile; a profile is named when the session is created`
      : `${USER_PROFILE_HEADER}: session ${sessionId} is attributed to another user profile (${attributed})`,
  );
}
