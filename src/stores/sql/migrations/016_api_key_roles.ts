import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// Each API key's role (`runtime`, `builder`, `admin`). Keys made before roles existed were the
// installation's full-power keys, so they stay `admin`.
export const apiKeyRoles: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable("api_keys")
      .addColumn("role", "text", (c) => c.notNull().defaultTo("admin"))
      .execute();
    await db.schema
      .createIndex("api_keys_by_workspace")
      .on("api_keys")
      .columns(["workspace_id", "id"])
      .execute();
  },
};
