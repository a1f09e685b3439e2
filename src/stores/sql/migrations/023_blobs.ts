import { type Kysely, PostgresAdapter } from "kysely";
import type { Migration } from "kysely/migration";

// Content-addressed blobs in the database (resources/blobs): a row per distinct content, keyed by
// its digest, written once and never updated. The bytes column is `bytea` on PostgreSQL and `blob`
// on SQLite (a SQLite deployment keeps its blobs in a directory, but the table exists on both so
// the store's conformance suite runs on both).
export const blobs: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? "bytea" : "blob";
    await db.schema
      .createTable("blobs")
      .addColumn("digest", "text", (c) => c.primaryKey())
      .addColumn("size", "bigint", (c) => c.notNull())
      .addColumn("bytes", bytes, (c) => c.notNull())
      .addColumn("created_at", "bigint", (c) => c.notNull())
      .execute();
  },
};
