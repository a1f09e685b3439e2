import type { Actor } from "../../control/adminAudit.js";
import type { SubjectErasureService } from "../../coordinator/dataSubjects.js";
import type { UserProfilesPort } from "../http/edgeServices.js";

/**
 * Deleting a user profile (the SDK: "when the end customer closes their account") erases its
 * captured content: a profile is the data subject of the sessions attributed to it, and the
 * erasure is the Coordinator's. The content goes first, so a refusal (a run of one of its sessions
 * queued or executing: 409 `data_subject_busy`) deletes nothing; then the profile is tombstoned,
 * which refuses its id in any later request; then the erasure is repeated, for a session attributed
 * in between. A repeat of the whole delete finds no profile (404); the data subject's erasure
 * route still erases by the same id.
 */
export async function deleteUserProfile(
  deps: { userProfiles: UserProfilesPort; erasure: SubjectErasureService },
  by: Actor,
  id: string,
): Promise<void> {
  await deps.userProfiles.retrieve(by.workspaceId, id);
  await deps.erasure.erase(by.workspaceId, id, by.actor);
  await deps.userProfiles.delete(by, id);
  await deps.erasure.erase(by.workspaceId, id, by.actor);
}
