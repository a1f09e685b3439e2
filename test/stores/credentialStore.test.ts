import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PublicCredentialAuth } from "../../src/control/credentialAuth.js";
import type { ControlStores } from "../../src/control/ports.js";
import type { CredentialHead, CredentialRevision, VaultRecord } from "../../src/control/vaultPorts.js";
import { newId } from "../../src/kernel/ids.js";
import { FieldSealer } from "../../src/secrets/fieldSealer.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { masterKeyId } from "../../src/secrets/masterKey.js";
import { decodeFields } from "../../src/secrets/secretFields.js";
import { postgresControlStores } from "../../src/stores/postgres/postgresStores.js";
import { controlStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

// The vault and credential stores on both backends: the same rules, on real databases, with real
// sealed records (so the raw-row scan below looks at what production would write).

interface Fixture {
  stores: ControlStores;
  /** Stores on a second connection pool (PostgreSQL) or the same handle (SQLite, one writer). */
  replica: ControlStores;
  /** Every row of every table, as text. */
  allRows(): Promise<string>;
  close(): Promise<void>;
}

async function dumpTables(db: Kysely<unknown>, names: string[]): Promise<string> {
  const dumps = await Promise.all(
    names.map(async (name) => JSON.stringify((await sql`select * from ${sql.table(name)}`.execute(db)).rows)),
  );
  return dumps.join("\n");
}

const BACKENDS = {
  SQLite: async (): Promise<Fixture> => {
    const handle = await openSqlite(":memory:");
    const stores = controlStores(handle.db);
    const db = handle.db as unknown as Kysely<unknown>;
    return {
      stores,
      replica: stores,
      allRows: async () => {
        const { rows } = await sql<{
          name: string;
        }>`select name from sqlite_master where type = 'table'`.execute(db);
        return dumpTables(
          db,
          rows.map((r) => r.name),
        );
      },
      close: () => handle.close(),
    };
  },
  PostgreSQL: async (): Promise<Fixture> => {
    const pg = await openTestPostgres();
    const db = pg.handle.db as unknown as Kysely<unknown>;
    return {
      stores: postgresControlStores(pg.handle),
      replica: postgresControlStores(await pg.openReplica()),
      allRows: async () => {
        const { rows } = await sql<{ table_name: string }>`
          select table_name from information_schema.tables where table_schema = ${pg.schema}`.execute(db);
        return dumpTables(
          db,
          rows.map((r) => r.table_name),
        );
      },
      close: () => pg.dispose(),
    };
  },
} as const;

const WORKSPACE = "wrkspc_test";
const key = randomBytes(32);
const secrets = new LocalSecretStore({ id: masterKeyId(key), key });
const sealer = new FieldSealer(secrets);
const AUTH: PublicCredentialAuth = { type: "static_bearer", mcp_server_url: "https://mcp.example.com" };

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

function vault(now = Date.now()): VaultRecord {
  return {
    id: newId("vlt", now),
    workspaceId: WORKSPACE,
    displayName: "v",
    metadata: {},
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  };
}

async function credential(vaultId: string, token: string, usageKey = "mcp:https://mcp.example.com") {
  const now = Date.now();
  const id = newId("vcrd", now);
  const identity = { credentialId: id, revision: 1, workspaceId: WORKSPACE };
  const { sealed, fieldNames } = await sealer.seal(identity, { token });
  const head: CredentialHead = {
    id,
    workspaceId: WORKSPACE,
    vaultId,
    displayName: null,
    metadata: {},
    authType: "static_bearer",
    usageKey,
    latestRevision: 1,
    createdAt: now,
    updatedAt: now,
    archivedAt: null,
  };
  const revision: CredentialRevision = {
    ...identity,
    auth: AUTH,
    secretFields: fieldNames,
    sealed,
    createdAt: now,
  };
  return { head, revision };
}

async function rotation(current: CredentialRevision, token: string): Promise<CredentialRevision> {
  const identity = {
    credentialId: current.credentialId,
    revision: current.revision + 1,
    workspaceId: WORKSPACE,
  };
  const { sealed, fieldNames } = await sealer.reseal(
    {
      identity: { ...identity, revision: current.revision },
      sealed: current.sealed,
      fieldNames: current.secretFields,
    },
    identity,
    { token },
  );
  return { ...identity, auth: AUTH, secretFields: fieldNames, sealed, createdAt: Date.now() };
}

async function tokenOf(revision: CredentialRevision): Promise<string> {
  const plaintext = await secrets.open(revision, revision.sealed);
  return decodeFields(plaintext).get("token")?.toString("utf8") ?? "";
}

describe.each(Object.keys(BACKENDS) as Array<keyof typeof BACKENDS>)(
  "vault and credential stores: %s",
  (backend) => {
    beforeEach(async (ctx) => {
      const reason = backend === "PostgreSQL" ? postgresUnavailable() : null;
      if (reason) ctx.skip(reason);
      fx = await BACKENDS[backend]();
    });

    it("stores heads and sealed revisions; reads are scoped to the workspace and vault", async () => {
      const { stores } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const { head, revision } = await credential(v.id, "tok-1");
      expect(await stores.credentials.create(head, revision, testAudit())).toEqual({ created: true });
      const view = await stores.credentials.get(WORKSPACE, v.id, head.id);
      expect(view).toEqual({ head, revision });
      expect(await tokenOf(view!.revision)).toBe("tok-1");
      expect(await stores.credentials.get("wrkspc_other", v.id, head.id)).toBeNull();
      expect(await stores.credentials.get(WORKSPACE, "vlt_other", head.id)).toBeNull();
      expect(await stores.vaults.get("wrkspc_other", v.id)).toBeNull();
    });

    it("rotation appends revision n+1 only from the current head; concurrent rotations: exactly one wins", async () => {
      const { stores, replica } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const { head, revision } = await credential(v.id, "tok-1");
      await stores.credentials.create(head, revision, testAudit());
      for (let round = 0; round < 10; round++) {
        const current = (await stores.credentials.get(WORKSPACE, v.id, head.id))!;
        const next = await rotation(current.revision, `tok-${round + 2}`);
        const moved = { ...current.head, latestRevision: next.revision };
        const results = await Promise.all([
          stores.credentials.appendRevision(moved, next, current.head.latestRevision, testAudit()),
          replica.credentials.appendRevision(moved, next, current.head.latestRevision, testAudit()),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
      }
      const latest = (await stores.credentials.get(WORKSPACE, v.id, head.id))!;
      expect(latest.revision.revision).toBe(11);
      expect(await tokenOf(latest.revision)).toBe("tok-11");
      // Every earlier revision is still there, unchanged.
      expect(await tokenOf((await stores.credentials.getRevision(WORKSPACE, head.id, 1))!)).toBe("tok-1");
    });

    it("one live credential per usage per vault; archiving frees the slot", async () => {
      const { stores } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const first = await credential(v.id, "a");
      await stores.credentials.create(first.head, first.revision, testAudit());
      const second = await credential(v.id, "b");
      expect(await stores.credentials.create(second.head, second.revision, testAudit())).toEqual({
        created: false,
        conflictWith: first.head.id,
      });
      expect(await stores.credentials.getRevision(WORKSPACE, second.head.id, 1)).toBeNull();
      await stores.credentials.updateHead({ ...first.head, archivedAt: Date.now() }, testAudit());
      expect(await stores.credentials.create(second.head, second.revision, testAudit())).toEqual({
        created: true,
      });
    });

    it("two replicas creating one usage at once: one is created, the other is told which", async () => {
      const { stores, replica } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      for (let round = 0; round < 5; round++) {
        const [a, b] = [await credential(v.id, "a"), await credential(v.id, "b")];
        const results = await Promise.all([
          stores.credentials.create(a.head, a.revision, testAudit()),
          replica.credentials.create(b.head, b.revision, testAudit()),
        ]);
        const winner = results[0].created ? a : b;
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(results.find((r) => !r.created)).toEqual({ created: false, conflictWith: winner.head.id });
        await stores.credentials.updateHead({ ...winner.head, archivedAt: Date.now() }, testAudit());
      }
    });

    it("list pages newest first and hides archived credentials unless asked", async () => {
      const { stores } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const c = await credential(v.id, `t${i}`, `env:K${i}`);
        await stores.credentials.create(c.head, c.revision, testAudit());
        ids.push(c.head.id);
        if (i === 0) await stores.credentials.updateHead({ ...c.head, archivedAt: Date.now() }, testAudit());
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await stores.credentials.list(WORKSPACE, v.id, {
          limit: 2,
          cursor,
          includeArchived: false,
        });
        seen.push(...page.data.map((c) => c.head.id));
        cursor = page.nextCursor;
      } while (cursor);
      // Newest first = id order descending (ids lead with their creation millisecond).
      expect(seen).toEqual(ids.slice(1).sort().reverse());
      const withArchived = await stores.credentials.list(WORKSPACE, v.id, {
        limit: 10,
        cursor: null,
        includeArchived: true,
      });
      expect(withArchived.data).toHaveLength(5);
    });

    it("deleting a credential or its vault erases every sealed revision and hides the head", async () => {
      const { stores } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const a = await credential(v.id, "a", "env:A");
      const b = await credential(v.id, "b", "env:B");
      await stores.credentials.create(a.head, a.revision, testAudit());
      await stores.credentials.create(b.head, b.revision, testAudit());
      expect(await stores.credentials.delete(WORKSPACE, v.id, a.head.id, Date.now(), testAudit())).toBe(true);
      expect(await stores.credentials.delete(WORKSPACE, v.id, a.head.id, Date.now(), testAudit())).toBe(
        false,
      );
      expect(await stores.credentials.get(WORKSPACE, v.id, a.head.id)).toBeNull();
      expect(await stores.credentials.getRevision(WORKSPACE, a.head.id, 1)).toBeNull();
      expect(await stores.vaults.delete(WORKSPACE, v.id, Date.now(), testAudit())).toBe(true);
      expect(await stores.vaults.get(WORKSPACE, v.id)).toBeNull();
      expect(await stores.credentials.getRevision(WORKSPACE, b.head.id, 1)).toBeNull();
    });

    it("no table holds a secret in plaintext (every row of every table)", async () => {
      const { stores, allRows } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const planted = `planted-store-${randomBytes(12).toString("hex")}`;
      const { head, revision } = await credential(v.id, planted);
      await stores.credentials.create(head, revision, testAudit());
      await stores.credentials.appendRevision(
        { ...head, latestRevision: 2 },
        await rotation(revision, `${planted}-2`),
        1,
        testAudit(),
      );
      const rows = await allRows();
      expect(rows).toContain(head.id);
      expect(rows).not.toContain(planted);
      expect(rows).not.toContain(Buffer.from(planted).toString("base64"));
    });

    it("lists a credential's revisions newest first, paged, and only in its workspace", async () => {
      const { stores } = fx!;
      const v = vault();
      await stores.vaults.create(v, testAudit());
      const { head, revision } = await credential(v.id, "tok-1");
      await stores.credentials.create(head, revision, testAudit());
      let current = revision;
      for (let n = 2; n <= 3; n++) {
        const next = await rotation(current, `tok-${n}`);
        await stores.credentials.appendRevision({ ...head, latestRevision: n }, next, n - 1, testAudit());
        current = next;
      }
      const first = await stores.credentials.listRevisions(WORKSPACE, head.id, { limit: 2, cursor: null });
      expect(first.data.map((r) => r.revision)).toEqual([3, 2]);
      const rest = await stores.credentials.listRevisions(WORKSPACE, head.id, {
        limit: 2,
        cursor: first.nextCursor,
      });
      expect(rest).toMatchObject({ data: [{ revision: 1 }], nextCursor: null });
      expect(
        (await stores.credentials.listRevisions("wrkspc_other", head.id, { limit: 10, cursor: null })).data,
      ).toEqual([]);
    });

    it("the custody audit lists newest first, filtered by credential and session, scoped to the workspace", async () => {
      const { stores } = fx!;
      const at = Date.now();
      const open = (n: number, credentialId: string, sessionId: string, workspaceId = WORKSPACE) => ({
        id: `copn_${String(n).padStart(3, "0")}`,
        workspaceId,
        sessionId,
        runId: `run_${n}`,
        owner: "local.abc/0",
        epoch: 1,
        vaultId: "vlt_1",
        credentialId,
        revision: 1,
        usageKey: "env:TOKEN",
        holder: "egress_proxy",
        outcome: "opened" as const,
        reason: null,
        refreshedTo: null,
        // Two opens share each millisecond: the id breaks the tie.
        createdAt: at + Math.floor(n / 2),
      });
      for (let n = 0; n < 6; n++)
        await stores.credentialOpens.record(open(n, n % 2 ? "vcrd_a" : "vcrd_b", `sesn_${n % 3}`));
      await stores.credentialOpens.record(open(6, "vcrd_a", "sesn_0", "wrkspc_other"));
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await stores.credentialOpens.list(WORKSPACE, { limit: 4, cursor });
        seen.push(...page.data.map((o) => o.id));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(["copn_005", "copn_004", "copn_003", "copn_002", "copn_001", "copn_000"]);
      const a = await stores.credentialOpens.list(WORKSPACE, {
        limit: 10,
        cursor: null,
        credentialId: "vcrd_a",
      });
      expect(a.data.map((o) => o.id)).toEqual(["copn_005", "copn_003", "copn_001"]);
      const both = await stores.credentialOpens.list(WORKSPACE, {
        limit: 10,
        cursor: null,
        credentialId: "vcrd_a",
        sessionId: "sesn_0",
      });
      expect(both.data.map((o) => o.id)).toEqual(["copn_003"]);
      expect(both.data[0]).toEqual(open(3, "vcrd_a", "sesn_0"));
    });
  },
);
