/**
 * API keys stored as HMAC-SHA-256 under a master-key-derived key, on SQLite and PostgreSQL: a key
 * stored as plain SHA-256 (before this scheme) still authenticates and is rewritten to the current
 * scheme on that first match; so is a key stored under a retired master key; new keys and the
 * bootstrap key are stored under the current scheme, with no second bootstrap row.
 */
import { createHash, createHmac } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { apiKeyHashing } from "../../src/control/apiKeyHashing.js";
import { DEFAULT_WORKSPACE_ID, IamService } from "../../src/control/iamService.js";
import type { ApiKeyRecord } from "../../src/control/ports.js";
import { API_KEY_HASH_PURPOSE, deriveWrappingKey } from "../../src/secrets/envelope.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlIamStore } from "../../src/stores/sql/sqlIamStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { openTestPostgres } from "../support/postgresFixtures.js";
import { ManualClock } from "../support/storeFixtures.js";

const OLD_MASTER = { id: "mk_old", key: Buffer.alloc(32, 1) };
const NEW_MASTER = { id: "mk_new", key: Buffer.alloc(32, 2) };
const hashKeyOf = (m: { id: string; key: Buffer }) => ({
  masterKeyId: m.id,
  key: deriveWrappingKey(m.key, API_KEY_HASH_PURPOSE),
});
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const hmac = (m: { id: string; key: Buffer }, text: string) =>
  createHmac("sha256", hashKeyOf(m).key).update("awaken api key v1\n").update(text).digest("hex");

const BACKENDS: Record<string, () => Promise<{ db: Db; close(): Promise<void> }>> = {
  SQLite: async () => {
    const handle = await openSqlite(":memory:");
    return { db: handle.db as Db, close: () => handle.close() };
  },
  // Never skipped: without AWAKEN_TEST_DATABASE_URL this fails, saying so.
  PostgreSQL: async () => {
    const pg = await openTestPostgres();
    return { db: pg.handle.db as Db, close: () => pg.dispose() };
  },
};

function legacyRow(key: string, id = "key_legacy"): ApiKeyRecord {
  return {
    id,
    workspaceId: DEFAULT_WORKSPACE_ID,
    keyHash: sha256(key),
    hashScheme: "sha256",
    label: "before",
    role: "builder",
    agentIds: null,
    createdAt: 1,
    revokedAt: null,
  };
}

for (const [backend, open] of Object.entries(BACKENDS)) {
  describe(`API key hashes on ${backend}`, () => {
    let db: { db: Db; close(): Promise<void> };
    let store: SqlIamStore;
    const clock = new ManualClock();
    const service = (hashing = apiKeyHashing(hashKeyOf(NEW_MASTER))) =>
      new IamService(store, clock, 30_000, null, hashing);
    const row = async (id: string) =>
      db.db
        .selectFrom("api_keys")
        .select(["key_hash", "hash_scheme"])
        .where("id", "=", id)
        .executeTakeFirstOrThrow();

    beforeEach(async () => {
      db = await open();
      store = new SqlIamStore(db.db);
      await store.ensureWorkspace({
        id: DEFAULT_WORKSPACE_ID,
        name: "d",
        createdAt: 1,
        audit: testAudit("workspace"),
      });
    });
    afterEach(async () => {
      await db.close();
    });

    it("a key stored as SHA-256 before still authenticates, and is then stored as HMAC under the master key", async () => {
      const key = "sk-awaken-made-before-the-change";
      await store.addApiKey(legacyRow(key), testAudit("api_key"));
      expect(await service().authenticate(key)).toMatchObject({ apiKeyId: "key_legacy", role: "builder" });
      expect(await row("key_legacy")).toEqual({
        key_hash: hmac(NEW_MASTER, key),
        hash_scheme: "hmac-sha256:mk_new",
      });
      // No trace of the old digest, and a fresh process (no cache) still finds it.
      expect(await store.findApiKeyByHashes([sha256(key)])).toBeNull();
      expect(await service().authenticate(key)).toMatchObject({ apiKeyId: "key_legacy" });
      expect(await service().authenticate("sk-awaken-wrong")).toBeNull();
    });

    it("new keys are stored as HMAC; revoking one ends it at once", async () => {
      const iam = service();
      const admin = {
        workspaceId: DEFAULT_WORKSPACE_ID,
        apiKeyId: "key_admin",
        role: "admin" as const,
        scope: { agentIds: null, sessionId: null, sessionNamespace: null, operations: null },
      };
      const { record, key } = await iam.createApiKey(admin, {
        role: "runtime",
        label: null,
        workspaceId: null,
        agentIds: null,
      });
      expect(await row(record.id)).toEqual({
        key_hash: hmac(NEW_MASTER, key),
        hash_scheme: "hmac-sha256:mk_new",
      });
      expect(record.keyHash).not.toBe(sha256(key));
      expect(await iam.authenticate(key)).toMatchObject({ apiKeyId: record.id });
      await iam.revokeApiKey({ workspaceId: DEFAULT_WORKSPACE_ID, actor: "key_admin" }, record.id);
      expect(await iam.authenticate(key)).toBeNull();
    });

    it("after a master key rotation, a key hashed under the retired key matches while it is configured, and moves to the new one", async () => {
      const key = "sk-awaken-under-the-old-master-key";
      await store.addApiKey(
        { ...legacyRow(key, "key_old"), keyHash: hmac(OLD_MASTER, key), hashScheme: "hmac-sha256:mk_old" },
        testAudit("api_key"),
      );
      // Without the retired key its rows cannot be matched (the operator keeps it until they moved).
      expect(await service().authenticate(key)).toBeNull();
      const rotated = apiKeyHashing(hashKeyOf(NEW_MASTER), [hashKeyOf(OLD_MASTER)]);
      expect(await service(rotated).authenticate(key)).toMatchObject({ apiKeyId: "key_old" });
      expect(await row("key_old")).toEqual({
        key_hash: hmac(NEW_MASTER, key),
        hash_scheme: "hmac-sha256:mk_new",
      });
      expect(await service().authenticate(key)).toMatchObject({ apiKeyId: "key_old" });
    });

    it("a row is matched only under the scheme it names", async () => {
      const key = "sk-awaken-scheme-mismatch";
      // Plain SHA-256 labelled as the HMAC scheme: not this key's HMAC, so it does not match.
      await store.addApiKey(
        { ...legacyRow(key, "key_odd"), hashScheme: "hmac-sha256:mk_new" },
        testAudit("api_key"),
      );
      expect(await service().authenticate(key)).toBeNull();
    });

    it("the bootstrap key stored as SHA-256 is moved, with its installation fact, and never added twice", async () => {
      const key = "sk-awaken-operator-chosen";
      await store.claimBootstrapKey(sha256(key), 1);
      await store.addApiKey(
        { ...legacyRow(key, "key_default"), label: "default", role: "admin" },
        testAudit("api_key"),
      );
      await service().bootstrap(key);
      await service().bootstrap(key);
      const rows = await db.db.selectFrom("api_keys").select(["id", "key_hash", "hash_scheme"]).execute();
      expect(rows).toEqual([
        { id: "key_default", key_hash: hmac(NEW_MASTER, key), hash_scheme: "hmac-sha256:mk_new" },
      ]);
      expect(await store.claimBootstrapKey("anything", 2)).toBe(hmac(NEW_MASTER, key));
      expect(await service().authenticate(key)).toMatchObject({ apiKeyId: "key_default", role: "admin" });
    });

    it("a generated first key is stored as HMAC, and a second replica's generated key is refused", async () => {
      const first = IamService.generateKey();
      expect(await service().bootstrapGenerated(first)).toBe(true);
      expect(await service().bootstrapGenerated(IamService.generateKey())).toBe(false);
      const rows = await db.db.selectFrom("api_keys").select(["key_hash", "hash_scheme"]).execute();
      expect(rows).toEqual([{ key_hash: hmac(NEW_MASTER, first), hash_scheme: "hmac-sha256:mk_new" }]);
    });
  });
}
