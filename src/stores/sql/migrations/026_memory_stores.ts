import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

export const memoryStores: Migration = {
  async up(_db: Kysely<unknown>): Promise<void> {},
};
