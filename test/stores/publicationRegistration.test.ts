/**
 * Publications' registration state on SQLite (a real file) and PostgreSQL (a private schema): a new
 * publication is unregistered until marked; the unregistered ones list oldest first across
 * workspaces, without refused ones; a rebuild clears every registration but the refusals; and
 * rows written before migration 022 read as registered.
 *
 * PostgreSQL is never skipped here: without AWAKEN_TEST_DATABASE_URL these tests fail, saying so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import { Migrator } from "kysely/migration";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentHead, PublicationStore, StoredPublication } from "../../src/control/ports.js";
import { MIGRATION_LOCK_KEY } from "../../src/stores/postgres/openPostgres.js";
import type { Db } from "../../src/stores/sql/db.js";
import { migrationProvider } from "../../src/stores/sql/migrations/index.js";
import type { Database } from "../../src/stores/sql/schema.js";
import { controlStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { emptySchema, openTestPostgres } from "../support/postgresFixtures.js";
import { TEST_AGENT } from "../support/storeFixtures.js";

const BEFORE_022 = "021_data_subjects";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-registration-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  return join(dir, "awaken.db");
}

/** A raw, unmigrated database of each backend (for the migration test) and a migrated store. */
const BACKENDS = {
  SQLite: {
    store: async (): Promise<PublicationStore> => {
      const handle = await openSqlite(tempFile());
      cleanups.push(() => handle.close());
      return controlStores(handle.db as Db).publications;
    },
    raw: async (): Promise<{ db: Kysely<Database>; migrateTo(name?: string): Promise<void> }> => {
      const db = new Kysely<Database>({
        dialect: new SqliteDialect({ database: new SqliteDatabase(tempFile()) }),
      });
      cleanups.push(() => db.destroy());
      const migrator = new Migrator({ db, provider: migrationProvider });
      return {
        db,
        migrateTo: (name) => migrated(name ? migrator.migrateTo(name) : migrator.migrateToLatest()),
      };
    },
  },
  PostgreSQL: {
    store: async (): Promise<PublicationStore> => {
      const test = await openTestPostgres();
      cleanups.push(() => test.dispose());
      return controlStores(test.handle.db as Db).publications;
    },
    raw: async (): Promise<{ db: Kysely<Database>; migrateTo(name?: string): Promise<void> }> => {
      const schema = await emptySchema();
      cleanups.push(() => schema.drop());
      const db = new Kysely<Database>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: schema.url, max: 1 }) }),
      });
      cleanups.push(() => db.destroy());
      // Under the lock other test files' schemas migrate and drop under (postgresFixtures.ts).
      const migrateTo = (name?: string) =>
        db.connection().execute(async (conn) => {
          await sql`select pg_advisory_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
          try {
            const migrator = new Migrator({
              db: conn,
              provider: migrationProvider,
              migrationTableSchema: schema.schema,
            });
            await migrated(name ? migrator.migrateTo(name) : migrator.migrateToLatest());
          } finally {
            await sql`select pg_advisory_unlock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(conn);
          }
        });
      return { db, migrateTo };
    },
  },
};

async function migrated(result: Promise<{ error?: unknown }>): Promise<void> {
  const { error } = await result;
  if (error) throw error;
}

let at = 1_800_000_000_000;
async function publish(store: PublicationStore, workspaceId = "wrkspc_a"): Promise<StoredPublication> {
  at += 1_000;
  const agentId = `agent_${at}`;
  const head: AgentHead = {
    id: agentId,
    workspaceId,
    latestVersion: 1,
    createdAt: at,
    updatedAt: at,
    archivedAt: null,
  };
  const publication: StoredPublication = {
    workspaceId,
    agentId,
    version: 1,
    fingerprint: `f_${at}`,
    definition: TEST_AGENT.definition,
    createdAt: at,
  };
  await store.createAgent(head, publication, testAudit("agent", workspaceId));
  return publication;
}

const ids = (list: StoredPublication[]) => list.map((p) => p.agentId);

describe.each(Object.keys(BACKENDS) as (keyof typeof BACKENDS)[])(
  "publication registration on %s",
  (name) => {
    const backend = BACKENDS[name];

    it("a new publication is unregistered until marked; marking twice keeps the first time", async () => {
      const store = await backend.store();
      const a = await publish(store);
      const b = await publish(store, "wrkspc_b");
      const c = await publish(store);
      expect(ids(await store.listUnregistered(10))).toEqual(ids([a, b, c]));
      expect(ids(await store.listUnregistered(2))).toEqual(ids([a, b]));
      expect(ids(await store.listUnregistered(2, b))).toEqual(ids([c]));

      await store.markRegistered(b.workspaceId, b.agentId, 1, at);
      await store.markRegistered(b.workspaceId, b.agentId, 1, at + 5);
      expect(ids(await store.listUnregistered(10))).toEqual(ids([a, c]));
      // A mark names its workspace: the same ids under another workspace mark nothing.
      await store.markRegistered("wrkspc_b", a.agentId, 1, at);
      expect(ids(await store.listUnregistered(10))).toEqual(ids([a, c]));
    });

    it("a refused publication is never listed; a later registration clears the refusal", async () => {
      const store = await backend.store();
      const a = await publish(store);
      const b = await publish(store);
      await store.markRegistrationRefused(a.workspaceId, a.agentId, 1, "another fingerprint");
      expect(ids(await store.listUnregistered(10))).toEqual(ids([b]));

      await store.markRegistered(a.workspaceId, a.agentId, 1, at);
      await store.markRegistered(b.workspaceId, b.agentId, 1, at);
      expect(await store.listUnregistered(10)).toEqual([]);
      expect(await store.markAllUnregistered()).toBe(2);
    });

    it("markAllUnregistered lists every registered publication again, refused ones excepted", async () => {
      const store = await backend.store();
      const a = await publish(store);
      const b = await publish(store);
      const refused = await publish(store);
      const pending = await publish(store);
      for (const p of [a, b]) await store.markRegistered(p.workspaceId, p.agentId, 1, at);
      await store.markRegistrationRefused(refused.workspaceId, refused.agentId, 1, "conflict");

      expect(await store.markAllUnregistered()).toBe(2);
      const listed = await store.listUnregistered(10);
      expect(ids(listed)).toEqual(ids([a, b, pending]));
      expect(listed[0]).toEqual(a);
    });

    it("a publication written before migration 022 reads as registered", async () => {
      const { db, migrateTo } = await backend.raw();
      await migrateTo(BEFORE_022);
      await sql`insert into agent_publications (workspace_id, agent_id, version, fingerprint, definition_json, created_at)
      values ('wrkspc_a', 'agent_old', 1, 'f', '{}', 1000)`.execute(db);
      await migrateTo();
      const row = await db
        .selectFrom("agent_publications")
        .select(["registered_at", "registration_error"])
        .executeTakeFirstOrThrow();
      // Number(): this raw pool reads bigint as text (openPostgres parses it; see int8AsNumber).
      expect(Number(row.registered_at)).toBe(1000);
      expect(row.registration_error).toBeNull();
      expect(await controlStores(db as Db).publications.listUnregistered(10)).toEqual([]);
    });
  },
);
