/**
 * The admin audit on SQLite and PostgreSQL: each store writes a change's audit entry in the change's
 * own transaction. An entry that cannot be written undoes the change; a change that fails, or that
 * takes no effect (a second archive, a second revoke, a stale version), writes no entry. The read
 * is a workspace's entries, newest first, filtered and paged.
 *
 * PostgreSQL is never skipped here: without AWAKEN_TEST_DATABASE_URL these tests fail, saying so.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { AdminAuditEntry, AuditAction, AuditResourceType } from "../../src/control/adminAudit.js";
import type { AgentHead, ApiKeyRecord, ControlStores, StoredPublication } from "../../src/control/ports.js";
import type { VaultRecord } from "../../src/control/vaultPorts.js";
import type { CoordinatorStores, EnvironmentRecord } from "../../src/coordinator/ports.js";
import { newId } from "../../src/kernel/ids.js";
import type { Db } from "../../src/stores/sql/db.js";
import { controlStores, coordinatorStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres } from "../support/postgresFixtures.js";
import { ManualClock } from "../support/storeFixtures.js";

const WS = "wrkspc_audit";

interface Fixture {
  control: ControlStores;
  coordinator: Omit<CoordinatorStores, "ledger" | "dispatch">;
  db: Db;
  close(): Promise<void>;
}

const BACKENDS: Record<string, () => Promise<Fixture>> = {
  SQLite: async () => {
    const handle = await openSqlite(":memory:");
    const db = handle.db as Db;
    return {
      db,
      control: controlStores(db),
      coordinator: coordinatorStores(db, new ManualClock()),
      close: () => handle.close(),
    };
  },
  PostgreSQL: async () => {
    const pg = await openTestPostgres();
    const db = pg.handle.db as Db;
    return {
      db,
      control: controlStores(db),
      coordinator: coordinatorStores(db, new ManualClock(), "postgres"),
      close: () => pg.dispose(),
    };
  },
};

let at = 1_700_000_000_000;
function entry(
  resourceType: AuditResourceType,
  resourceId: string,
  action: AuditAction = "create",
  workspaceId = WS,
): AdminAuditEntry {
  at += 1;
  return {
    id: newId("aud", at),
    workspaceId,
    actor: "key_test",
    action,
    resourceType,
    resourceId,
    revision: null,
    beforeDigest: null,
    afterDigest: "a".repeat(64),
    createdAt: at,
  };
}

function agent(id = newId("agent", at)): { head: AgentHead; first: StoredPublication } {
  return {
    head: { id, workspaceId: WS, latestVersion: 1, createdAt: at, updatedAt: at, archivedAt: null },
    first: {
      workspaceId: WS,
      agentId: id,
      version: 1,
      fingerprint: "f",
      definition: { name: "a", model: "claude-sonnet-4-5" } as unknown as StoredPublication["definition"],
      createdAt: at,
    },
  };
}

const vault = (): VaultRecord => ({
  id: newId("vlt", at),
  workspaceId: WS,
  displayName: "v",
  metadata: {},
  createdAt: at,
  updatedAt: at,
  archivedAt: null,
});

const environment = (): EnvironmentRecord => ({
  id: newId("env", at),
  workspaceId: WS,
  name: "e",
  description: null,
  scope: null,
  metadata: {},
  config: {
    type: "cloud",
    networking: { type: "unrestricted" },
    packages: {},
  } as EnvironmentRecord["config"],
  revision: 1,
  createdAt: at,
  updatedAt: at,
  archivedAt: null,
});

const apiKey = (id = newId("key", at)): ApiKeyRecord => ({
  id,
  workspaceId: WS,
  keyHash: `hash-${id}`,
  hashScheme: "sha256",
  label: "",
  role: "runtime",
  agentIds: null,
  createdAt: at,
  revokedAt: null,
});

async function entries(f: Fixture, workspaceId = WS): Promise<AdminAuditEntry[]> {
  return (await f.control.adminAudit.list(workspaceId, { limit: 100, cursor: null })).data;
}

for (const [backend, open] of Object.entries(BACKENDS)) {
  describe(`admin audit on ${backend}`, () => {
    let f: Fixture;
    beforeEach(async () => {
      f = await open();
    });
    afterEach(async () => {
      await f.close();
    });

    it("an entry that cannot be written undoes the change it records", async () => {
      const taken = entry("agent", "agent_x");
      const first = agent();
      await f.control.publications.createAgent(first.head, first.first, taken);
      // Every write below reuses the id of an entry already written: the insert of the entry fails.
      const a = agent();
      await expect(f.control.publications.createAgent(a.head, a.first, taken)).rejects.toThrow();
      expect(await f.control.publications.getHead(WS, a.head.id)).toBeNull();

      const v = vault();
      await expect(f.control.vaults.create(v, taken)).rejects.toThrow();
      expect(await f.control.vaults.get(WS, v.id)).toBeNull();

      const e = environment();
      await expect(f.coordinator.environments.create(e, taken)).rejects.toThrow();
      expect(await f.coordinator.environments.get(WS, e.id)).toBeNull();

      const k = apiKey();
      await expect(f.control.iam.addApiKey(k, taken)).rejects.toThrow();
      expect(await f.control.iam.findApiKey(WS, k.id)).toBeNull();

      const kept = apiKey();
      await f.control.iam.addApiKey(kept, entry("api_key", kept.id));
      await expect(f.control.iam.revokeApiKey(WS, kept.id, at, taken)).rejects.toThrow();
      expect((await f.control.iam.findApiKey(WS, kept.id))?.revokedAt).toBeNull();

      await expect(f.control.publications.archive(WS, first.head.id, at, taken)).rejects.toThrow();
      expect((await f.control.publications.getHead(WS, first.head.id))?.archivedAt).toBeNull();

      expect((await entries(f)).map((x) => x.resourceType).sort()).toEqual(["agent", "api_key"]);
    });

    it("a change that fails, or takes no effect, writes no entry", async () => {
      const a = agent();
      await f.control.publications.createAgent(a.head, a.first, entry("agent", a.head.id));
      // The same agent id again: the change fails, and so does its entry.
      await expect(
        f.control.publications.createAgent(a.head, a.first, entry("agent", a.head.id)),
      ).rejects.toThrow();
      // A stale expected version appends nothing.
      const next = { ...a.first, version: 2 };
      expect(await f.control.publications.appendVersion(next, 7, entry("agent", a.head.id, "update"))).toBe(
        false,
      );
      expect(
        await f.control.publications.archive(WS, a.head.id, at, entry("agent", a.head.id, "archive")),
      ).toBe(true);
      expect(
        await f.control.publications.archive(WS, a.head.id, at, entry("agent", a.head.id, "archive")),
      ).toBe(false);

      const k = apiKey();
      expect(await f.control.iam.addApiKey(k, entry("api_key", k.id))).toBe(true);
      // A key whose hash is stored already is not added again, and not audited again.
      expect(
        await f.control.iam.addApiKey({ ...apiKey(), keyHash: k.keyHash }, entry("api_key", "key_dup")),
      ).toBe(false);
      await f.control.iam.revokeApiKey(WS, k.id, at, entry("api_key", k.id, "revoke"));
      await f.control.iam.revokeApiKey(WS, k.id, at, entry("api_key", k.id, "revoke"));
      // A workspace is audited when it is made, not when it is named again.
      const ws = { id: WS, name: WS, createdAt: at };
      await f.control.iam.ensureWorkspace({ ...ws, audit: entry("workspace", WS) });
      await f.control.iam.ensureWorkspace({ ...ws, audit: entry("workspace", WS) });

      const v = vault();
      await f.control.vaults.create(v, entry("vault", v.id));
      expect(await f.control.vaults.delete(WS, v.id, at, entry("vault", v.id, "delete"))).toBe(true);
      expect(await f.control.vaults.delete(WS, v.id, at, entry("vault", v.id, "delete"))).toBe(false);
      expect(await f.control.vaults.update(v, entry("vault", v.id, "update"))).toBe(false);

      const e = environment();
      await f.coordinator.environments.create(e, entry("environment", e.id));
      expect(await f.coordinator.environments.delete(WS, e.id, entry("environment", e.id, "delete"))).toBe(
        true,
      );
      expect(await f.coordinator.environments.delete(WS, e.id, entry("environment", e.id, "delete"))).toBe(
        false,
      );
      expect(await f.coordinator.environments.update(e, false, entry("environment", e.id, "update"))).toBe(
        false,
      );

      expect((await entries(f)).map((x) => `${x.resourceType}.${x.action}`)).toEqual([
        "environment.delete",
        "environment.create",
        "vault.delete",
        "vault.create",
        "workspace.create",
        "api_key.revoke",
        "api_key.create",
        "agent.archive",
        "agent.create",
      ]);
    });

    it("lists a workspace's entries newest first, filtered and paged; never another workspace's", async () => {
      const written: AdminAuditEntry[] = [];
      for (let i = 0; i < 5; i++) {
        const v = { ...vault(), id: `vlt_${i}` };
        const audit = entry("vault", v.id, i % 2 === 0 ? "create" : "update");
        await f.control.vaults.create(v, audit);
        written.push(audit);
      }
      const elsewhere = { ...vault(), workspaceId: "wrkspc_elsewhere" };
      await f.control.vaults.create(elsewhere, entry("vault", elsewhere.id, "create", "wrkspc_elsewhere"));

      const all = await entries(f);
      expect(all).toEqual([...written].reverse());
      expect((await entries(f, "wrkspc_elsewhere")).map((x) => x.resourceId)).toEqual([elsewhere.id]);

      const list = f.control.adminAudit;
      expect(
        (await list.list(WS, { limit: 10, cursor: null, action: "update" })).data.map((x) => x.resourceId),
      ).toEqual(["vlt_3", "vlt_1"]);
      expect(
        (await list.list(WS, { limit: 10, cursor: null, resourceId: "vlt_2" })).data.map((x) => x.action),
      ).toEqual(["create"]);
      expect((await list.list(WS, { limit: 10, cursor: null, resourceType: "agent" })).data).toEqual([]);
      expect((await list.list(WS, { limit: 10, cursor: null, resourceId: elsewhere.id })).data).toEqual([]);

      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await list.list(WS, { limit: 2, cursor });
        paged.push(...page.data.map((x) => x.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged).toEqual(all.map((x) => x.id));
      await expect(list.list(WS, { limit: 2, cursor: "garbage" })).rejects.toThrow(/cursor/);
    });
  });
}
