import SqliteDatabase from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { Migrator } from "kysely/migration";
import { afterEach, describe, expect, it } from "vitest";
import { migrationProvider } from "../../src/stores/sql/migrations/index.js";
import type { Database } from "../../src/stores/sql/schema.js";
import { SqlInstallationFacts } from "../../src/stores/sql/sqlInstallationFacts.js";

let db: Kysely<Database> | undefined;
afterEach(async () => {
  await db?.destroy();
  db = undefined;
});

function memoryDb(): Kysely<Database> {
  db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SqliteDatabase(":memory:") }) });
  return db;
}

describe("installation facts", () => {
  it("a database migrated from before them keeps its first default API key as the bootstrap key", async () => {
    const db = memoryDb();
    const migrator = new Migrator({ db, provider: migrationProvider });
    expect((await migrator.migrateTo("007_progress_aware_crash_reset")).error).toBeUndefined();
    await db
      .insertInto("workspaces")
      .values({ id: "wrkspc_default", name: "Default", created_at: 1 })
      .execute();
    await db
      .insertInto("api_keys")
      .values([
        {
          id: "key_b",
          workspace_id: "wrkspc_default",
          key_hash: "second",
          label: "default",
          created_at: 2,
          revoked_at: null,
        },
        {
          id: "key_a",
          workspace_id: "wrkspc_default",
          key_hash: "first",
          label: "default",
          created_at: 1,
          revoked_at: null,
        },
      ])
      .execute();
    expect((await migrator.migrateToLatest()).error).toBeUndefined();
    const facts = new SqlInstallationFacts(db);
    expect(await facts.get("bootstrap_api_key")).toBe("first");
    expect(await facts.claim("bootstrap_api_key", "third", 3)).toBe("first");
  });

  it("claim is first-writer-wins; replace moves a fact only from the value it holds", async () => {
    const db = memoryDb();
    expect((await new Migrator({ db, provider: migrationProvider }).migrateToLatest()).error).toBeUndefined();
    const facts = new SqlInstallationFacts(db);
    expect(await facts.get("master_key_id")).toBeNull();
    expect(await facts.claim("master_key_id", "aaaa", 1)).toBe("aaaa");
    expect(await facts.claim("master_key_id", "bbbb", 2)).toBe("aaaa");
    expect(await facts.replace("master_key_id", "bbbb", "cccc", 3)).toBe(false);
    expect(await facts.replace("master_key_id", "aaaa", "cccc", 3)).toBe(true);
    expect(await facts.get("master_key_id")).toBe("cccc");
  });
});
