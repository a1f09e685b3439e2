import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// An API key's agent allow-list, as a JSON array of agent ids; null (every key made before) reaches
// every agent of its workspace.
export const apiKeyAgents: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable("api_keys").addColumn("agent_ids", "text").execute();
  },
};
