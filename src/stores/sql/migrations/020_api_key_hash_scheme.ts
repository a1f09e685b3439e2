import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

// How each API key's hash was made. Rows stored before are plain SHA-256; the server rewrites each
// to HMAC-SHA-256 under its master-key-derived key when that key next authenticates (a migration
// holds neither the API key nor the master key, so it cannot rewrite them here).
export const apiKeyHashScheme: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable("api_keys")
      .addColumn("hash_scheme", "text", (c) => c.notNull().defaultTo("sha256"))
      .execute();
  },
};
