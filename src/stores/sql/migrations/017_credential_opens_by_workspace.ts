import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// The custody audit read newest first across a workspace (`GET /v1/awaken/credential_opens`): the
// audit only grows, so that page must not scan it.
export const credentialOpensByWorkspace: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex("credential_opens_by_workspace")
      .on("credential_opens")
      .columns(["workspace_id", "created_at", "id"])
      .execute();
  },
};
