import type { Migration } from "kysely/migration";

// Created its wake notification on PostgreSQL. Migration 028 replaced those functions with plain statements and
// drops them, so a new database skips creating them; the name stays so every database's migration
// list reads the same.
export const commitAppendNotify: Migration = {
  async up(): Promise<void> {},
};
