import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

export const files: Migration = {
  async up(_db: Kysely<unknown>): Promise<void> {},
};
