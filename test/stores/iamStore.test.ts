/**
 * The IAM store and the caller-scope filters of the session list, on SQLite and PostgreSQL: an
 * API key's agent allow-list is kept as given (null: every agent), and a session list narrowed to
 * some agents or to one session holds nothing else.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../../src/control/ports.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlIamStore } from "../../src/stores/sql/sqlIamStore.js";
import { coordinatorStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";
import { ManualClock, seedSession, TEST_AGENT } from "../support/storeFixtures.js";

const BACKENDS = {
  SQLite: async () => {
    const handle = await openSqlite(":memory:");
    return { db: handle.db as Db, close: () => handle.close() };
  },
  PostgreSQL: async () => {
    const pg = await openTestPostgres();
    return { db: pg.handle.db as Db, close: () => pg.dispose() };
  },
};

let closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing) await close();
  closing = [];
});

const key = (id: string, agentIds: readonly string[] | null): ApiKeyRecord => ({
  id,
  workspaceId: "wrkspc_test",
  keyHash: `hash-${id}`,
  hashScheme: "sha256",
  label: "",
  role: "runtime",
  agentIds,
  createdAt: 1,
  revokedAt: null,
});

for (const [name, open] of Object.entries(BACKENDS)) {
  const skip = name === "PostgreSQL" ? postgresUnavailable() : null;
  describe.skipIf(skip !== null)(
    `IAM store and scoped session lists on ${name}${skip ? ` (${skip})` : ""}`,
    () => {
      it("keeps a key's agent allow-list, and null for every agent", async () => {
        const opened = await open();
        closing.push(opened.close);
        const store = new SqlIamStore(opened.db);
        await store.ensureWorkspace({
          id: "wrkspc_test",
          name: "t",
          createdAt: 1,
          audit: testAudit("workspace"),
        });
        await store.addApiKey(key("key_a", ["agent_1", "agent_2"]), testAudit("api_key"));
        await store.addApiKey(key("key_b", null), testAudit("api_key"));
        expect((await store.findApiKeyByHashes(["hash-key_a"]))?.agentIds).toEqual(["agent_1", "agent_2"]);
        expect((await store.findApiKey("wrkspc_test", "key_b"))?.agentIds).toBeNull();
        expect((await store.listApiKeys("wrkspc_test", 10, null)).map((k) => k.agentIds)).toEqual([
          ["agent_1", "agent_2"],
          null,
        ]);
      });

      it("a session list narrowed to agents or to one session holds nothing else", async () => {
        const opened = await open();
        closing.push(opened.close);
        const clock = new ManualClock();
        const stores = coordinatorStores(opened.db, clock);
        const first = await seedSession(stores, clock);
        clock.advance(1);
        const second = await seedSession(stores, clock);
        const base = { limit: 10, cursor: null, order: "asc" as const, includeArchived: true };
        const list = async (extra: object) =>
          (await stores.sessions.list("wrkspc_test", { ...base, ...extra })).data.map((s) => s.id);
        expect(await list({})).toEqual([first.id, second.id]);
        expect(await list({ agentIds: [TEST_AGENT.agentId] })).toEqual([first.id, second.id]);
        expect(await list({ agentIds: ["agent_other"] })).toEqual([]);
        expect(await list({ agentIds: [] })).toEqual([]);
        expect(await list({ ids: [second.id] })).toEqual([second.id]);
        expect(await list({ ids: [second.id], agentIds: ["agent_other"] })).toEqual([]);
        expect(await list({ ids: [] })).toEqual([]);
      });
    },
  );
}
