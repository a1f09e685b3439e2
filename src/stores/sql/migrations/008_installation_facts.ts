import { type Kysely, sql } from "kysely";
import type { Migration } from "kysely/migration";

// Facts about the installation every replica must agree on, one row per name: which master key
// seals its credentials (`master_key_id`: the key's non-secret id, never the key) and the hash of
// the API key minted at its first start (`bootstrap_api_key`). The first process to insert a name
// wins; the others read it and obey. Same column conventions as 001.
export const installationFacts: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable("installation_facts")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("recorded_at", "bigint", (c) => c.notNull())
      .execute();
    // A database that already minted its bootstrap key keeps it as the one; no replica mints another.
    await sql`
      insert into installation_facts (name, value, recorded_at)
      select 'bootstrap_api_key', key_hash, created_at from api_keys
      where workspace_id = 'wrkspc_default' and label = 'default'
      order by created_at, id limit 1`.execute(db);
  },
};
