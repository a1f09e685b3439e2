import type { RevisionIdentity } from "../../secrets/ports.js";

/** Every repository token's sealing identity starts so; the sealer lent to this family opens no other. */
export const REPOSITORY_IDENTITY = "repo:";

/** A repository resource's token identity: its id, the token's revision and the workspace. */
export const tokenIdentity = (
  workspaceId: string,
  resourceId: string,
  revision: number,
): RevisionIdentity => ({
  credentialId: `${REPOSITORY_IDENTITY}${resourceId}`,
  revision,
  workspaceId,
});
