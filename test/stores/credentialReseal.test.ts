import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { AgentDefinition } from "../../src/control/agentDefinition.js";
import { CredentialCustody } from "../../src/control/credentialCustody.js";
import { CredentialService } from "../../src/control/credentialService.js";
import { ResealRefused, resealCredentialRevisions } from "../../src/control/masterKeyReseal.js";
import type { ControlStores } from "../../src/control/ports.js";
import { VaultService } from "../../src/control/vaultService.js";
import type { CredentialPin } from "../../src/coordinator/ports.js";
import { systemClock } from "../../src/kernel/clock.js";
import { SecretOpenError } from "../../src/secrets/errors.js";
import { FieldSealer } from "../../src/secrets/fieldSealer.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { type MasterKey, masterKeyId } from "../../src/secrets/masterKey.js";
import { decodeFields } from "../../src/secrets/secretFields.js";
import { postgresControlStores } from "../../src/stores/postgres/postgresStores.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlCredentialStore } from "../../src/stores/sql/sqlCredentialStore.js";
import { controlStores } from "../../src/stores/sql/storeBundles.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { testAudit } from "../support/adminAuditFixtures.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

// Master-key rotation's re-seal (`awaken secrets reseal`) on both backends, on real databases with
// real sealed records written by vault ingress: every revision ends under the new key, pins still
// open through custody, only the new key is needed afterwards, and the run is resumable, idempotent
// and fails closed.

interface Fixture {
  db: Db;
  stores: ControlStores;
  close(): Promise<void>;
}

const BACKENDS = {
  SQLite: async (): Promise<Fixture> => {
    const handle = await openSqlite(":memory:");
    return { db: handle.db, stores: controlStores(handle.db), close: () => handle.close() };
  },
  PostgreSQL: async (): Promise<Fixture> => {
    const pg = await openTestPostgres();
    return { db: pg.handle.db, stores: postgresControlStores(pg.handle), close: () => pg.dispose() };
  },
} as const;

const WORKSPACE = "wrkspc_reseal";
const MCP_URL = "https://mcp.example.com/mcp";

function newKey(): MasterKey {
  const key = randomBytes(32);
  return { id: masterKeyId(key), key };
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** Vault ingress on `store`: what a server with that key would have written. */
function ingress(f: Fixture, store: LocalSecretStore) {
  const vaults = new VaultService(f.stores.vaults, systemClock);
  return {
    vaults,
    credentials: new CredentialService(f.stores.credentials, vaults, new FieldSealer(store), systemClock),
  };
}

/** Three credentials, one rotated twice and one with a refresh: 6 revisions under `old`. */
async function seed(f: Fixture, old: LocalSecretStore) {
  const { vaults, credentials } = ingress(f, old);
  const vault = await vaults.create(
    { workspaceId: WORKSPACE, actor: "cli" },
    { displayName: "v", metadata: {} },
  );
  const bearer = await credentials.create({ workspaceId: WORKSPACE, actor: "cli" }, vault.id, {
    auth: { type: "static_bearer", token: "bearer-1", mcp_server_url: MCP_URL },
    displayName: null,
    metadata: {},
  });
  await credentials.update({ workspaceId: WORKSPACE, actor: "cli" }, vault.id, bearer.head.id, {
    auth: { type: "static_bearer", token: "bearer-2" },
  });
  await credentials.update({ workspaceId: WORKSPACE, actor: "cli" }, vault.id, bearer.head.id, {
    auth: { type: "static_bearer", token: "bearer-3" },
  });
  const oauth = await credentials.create({ workspaceId: WORKSPACE, actor: "cli" }, vault.id, {
    auth: {
      type: "mcp_oauth",
      access_token: "access-1",
      mcp_server_url: "https://other.example.com/mcp",
      refresh: {
        refresh_token: "refresh-1",
        client_id: "cid",
        token_endpoint: "https://auth.example.com/token",
        token_endpoint_auth: { type: "client_secret_basic", client_secret: "client-1" },
      },
    },
    displayName: null,
    metadata: {},
  });
  await credentials.update({ workspaceId: WORKSPACE, actor: "cli" }, vault.id, oauth.head.id, {
    auth: { type: "mcp_oauth", access_token: "access-2" },
  });
  const env = await credentials.create({ workspaceId: WORKSPACE, actor: "cli" }, vault.id, {
    auth: {
      type: "environment_variable",
      secret_name: "API_KEY",
      secret_value: "env-1",
      networking: { type: "unrestricted" },
    },
    displayName: null,
    metadata: {},
  });
  return { vault, bearer: bearer.head.id, oauth: oauth.head.id, env: env.head.id };
}

/** Every revision row as the store holds it. */
async function rows(f: Fixture) {
  return (
    await f.db
      .selectFrom("vault_credential_revisions")
      .selectAll()
      .orderBy("credential_id")
      .orderBy("revision")
      .execute()
  ).map((r) => ({ ...r, revision: Number(r.revision) }));
}

async function openAll(f: Fixture, store: LocalSecretStore): Promise<Array<Record<string, string>>> {
  const out: Array<Record<string, string>> = [];
  for (const r of await rows(f)) {
    const plaintext = await store.open(
      { credentialId: r.credential_id, revision: r.revision, workspaceId: r.workspace_id },
      {
        format: Number(r.seal_format),
        masterKeyId: r.master_key_id,
        wrappedKey: Buffer.from(r.wrapped_key, "base64"),
        ciphertext: Buffer.from(r.sealed_material, "base64"),
      },
    );
    out.push(Object.fromEntries([...decodeFields(plaintext)].map(([k, v]) => [k, v.toString("utf8")])));
    plaintext.fill(0);
  }
  return out;
}

describe.each(Object.keys(BACKENDS) as Array<keyof typeof BACKENDS>)("master-key re-seal on %s", (name) => {
  const skip = name === "PostgreSQL" && postgresUnavailable() !== null;

  it.skipIf(skip)(
    "re-seals every revision under the new key; pins open through custody; only the new key is needed after",
    async () => {
      const f = await BACKENDS[name]();
      fx = f;
      const oldKey = newKey();
      const nextKey = newKey();
      const seeded = await seed(f, new LocalSecretStore(oldKey));
      const plaintextsBefore = await openAll(f, new LocalSecretStore(oldKey));
      const identitiesBefore = (await rows(f)).map((r) => [
        r.credential_id,
        r.revision,
        r.workspace_id,
        r.auth_json,
        r.secret_fields_json,
      ]);

      // A session pinned before the rotation (revision 3 of the bearer).
      const pinningCustody = new CredentialCustody(
        f.stores.vaults,
        f.stores.credentials,
        new FieldSealer(new LocalSecretStore(oldKey)),
        f.stores.credentialOpens,
        async () => null,
        systemClock,
      );
      const agent = {
        model: { id: "claude-sonnet-4-6" },
        mcp_servers: [{ name: "docs", type: "url", url: MCP_URL }],
      } as unknown as AgentDefinition;
      const pins: CredentialPin[] = await pinningCustody.pin(WORKSPACE, [seeded.vault.id], agent);
      expect(pins).toContainEqual(expect.objectContaining({ credentialId: seeded.bearer, revision: 3 }));

      // Rotated: the new key is current, the old one retired.
      const rotated = new LocalSecretStore(nextKey, [oldKey]);
      const progress: number[] = [];
      const report = await resealCredentialRevisions(new SqlCredentialStore(f.db), rotated, {
        batchSize: 2,
        onProgress: (p) => progress.push(p.resealed),
      });
      expect(report).toMatchObject({ resealed: 6, skipped: 0, total: 6, remaining: 0, stoppedEarly: false });
      expect(report.currentKeyId).toBe(nextKey.id);
      expect([...report.before]).toEqual([[oldKey.id, 6]]);
      expect([...report.after]).toEqual([[nextKey.id, 6]]);
      expect(progress).toEqual([2, 4, 6]);
      // Each re-sealed revision is in the admin audit as the local command's, naming no secret.
      const audited = await f.stores.adminAudit.list(WORKSPACE, {
        limit: 100,
        cursor: null,
        action: "reseal",
      });
      expect(audited.data).toHaveLength(6);
      expect(audited.data.every((e) => e.actor === "cli" && e.resourceType === "credential")).toBe(true);

      const after = await rows(f);
      expect(after.map((r) => r.master_key_id)).toEqual(Array(6).fill(nextKey.id));
      // Only the seal changed: identity, auth and field names are the row's as before.
      expect(
        after.map((r) => [r.credential_id, r.revision, r.workspace_id, r.auth_json, r.secret_fields_json]),
      ).toEqual(identitiesBefore);
      // Only the new key is needed now; the old one alone opens nothing.
      expect(await openAll(f, new LocalSecretStore(nextKey))).toEqual(plaintextsBefore);
      await expect(openAll(f, new LocalSecretStore(oldKey))).rejects.toMatchObject({
        name: "SecretOpenError",
        reason: "unknown_master_key",
      });

      // The session's pin opens through custody (admission + audit) with only the new key.
      const custody = (store: LocalSecretStore) =>
        new CredentialCustody(
          f.stores.vaults,
          f.stores.credentials,
          new FieldSealer(store),
          f.stores.credentialOpens,
          async () => pins,
          systemClock,
        );
      const request = {
        workspaceId: WORKSPACE,
        sessionId: "sesn_reseal",
        runId: "run_1",
        owner: "local",
        epoch: 1,
        holder: "mcp_connection" as const,
        mcpServerUrl: MCP_URL,
      };
      const opening = await custody(new LocalSecretStore(nextKey)).open(request);
      expect(opening.kind).toBe("bearer");
      if (opening.kind === "bearer") {
        expect(opening.token.toString("utf8")).toBe("bearer-3");
        expect(opening.revision).toBe(3);
        opening.token.fill(0);
      }
      const refused = await custody(new LocalSecretStore(oldKey)).open(request);
      expect(refused).toMatchObject({
        kind: "refused",
        reason: expect.stringContaining("unknown_master_key"),
      });

      // Idempotent: a second run finds nothing to do and changes nothing.
      const again = await resealCredentialRevisions(new SqlCredentialStore(f.db), rotated);
      expect(again).toMatchObject({ resealed: 0, skipped: 0, total: 0, remaining: 0 });
      expect(await rows(f)).toEqual(after);
    },
  );

  it.skipIf(skip)(
    "resumes after an interruption: a partial run, a run stopped by its signal, then the rest",
    async () => {
      const f = await BACKENDS[name]();
      fx = f;
      const oldKey = newKey();
      const nextKey = newKey();
      await seed(f, new LocalSecretStore(oldKey));
      const plaintexts = await openAll(f, new LocalSecretStore(oldKey));
      const rotated = new LocalSecretStore(nextKey, [oldKey]);
      const store = new SqlCredentialStore(f.db);

      const partial = await resealCredentialRevisions(store, rotated, { batchSize: 4, limit: 2 });
      expect(partial).toMatchObject({ resealed: 2, total: 6, remaining: 4, stoppedEarly: true });

      // Interrupted from inside (Ctrl-C after the first progress report).
      const controller = new AbortController();
      const interrupted = await resealCredentialRevisions(store, rotated, {
        batchSize: 1,
        signal: controller.signal,
        onProgress: () => controller.abort(),
      });
      expect(interrupted).toMatchObject({ resealed: 1, total: 4, remaining: 3, stoppedEarly: true });
      // A server in between still opens everything (the old key is retired, not gone).
      expect(await openAll(f, rotated)).toEqual(plaintexts);

      const rest = await resealCredentialRevisions(store, rotated, { batchSize: 2 });
      expect(rest).toMatchObject({ resealed: 3, total: 3, remaining: 0, stoppedEarly: false });
      expect(await openAll(f, new LocalSecretStore(nextKey))).toEqual(plaintexts);
    },
  );

  it.skipIf(skip)(
    "fails closed: refuses to start under an unknown key, stops at a revision that does not open",
    async () => {
      const f = await BACKENDS[name]();
      fx = f;
      const oldKey = newKey();
      const nextKey = newKey();
      const seeded = await seed(f, new LocalSecretStore(oldKey));
      const before = await rows(f);
      const store = new SqlCredentialStore(f.db);

      // The old key was not supplied as retired: nothing may change.
      const refusal = resealCredentialRevisions(store, new LocalSecretStore(nextKey));
      await expect(refusal).rejects.toBeInstanceOf(ResealRefused);
      await expect(resealCredentialRevisions(store, new LocalSecretStore(nextKey))).rejects.toThrow(
        new RegExp(`6 revision\\(s\\) are sealed under master key ${oldKey.id}.*Nothing was changed`),
      );
      expect(await rows(f)).toEqual(before);

      // A ciphertext moved to another row (the row binding) does not open: the run stops there.
      const [first, second] = before.filter((r) => r.credential_id === seeded.bearer);
      await f.db
        .updateTable("vault_credential_revisions")
        .set({ wrapped_key: first!.wrapped_key, sealed_material: first!.sealed_material })
        .where("credential_id", "=", second!.credential_id)
        .where("revision", "=", second!.revision)
        .execute();
      const rotated = new LocalSecretStore(nextKey, [oldKey]);
      const stopped = resealCredentialRevisions(store, rotated, { batchSize: 10 });
      await expect(stopped).rejects.toBeInstanceOf(ResealRefused);
      await expect(resealCredentialRevisions(store, rotated)).rejects.toMatchObject({
        cause: expect.any(SecretOpenError),
        message: expect.stringContaining(`credential ${seeded.bearer} revision 2`),
      });
      const afterStop = await rows(f);
      const moved = afterStop.find((r) => r.credential_id === seeded.bearer && r.revision === 2);
      expect(moved?.master_key_id).toBe(oldKey.id); // never re-sealed (that would launder it)
    },
  );

  it.skipIf(skip)("two runs cannot both win a revision: the seal is compare-and-swapped", async () => {
    const f = await BACKENDS[name]();
    fx = f;
    const oldKey = newKey();
    const nextKey = newKey();
    await seed(f, new LocalSecretStore(oldKey));
    const store = new SqlCredentialStore(f.db);
    const rotated = new LocalSecretStore(nextKey, [oldKey]);
    const [row] = await store.listSealedNotUnder(nextKey.id, null, 1);
    const identity = {
      credentialId: row!.credentialId,
      revision: row!.revision,
      workspaceId: row!.workspaceId,
    };
    const a = await rotated.rewrap(identity, row!.sealed);
    const b = await rotated.rewrap(identity, row!.sealed);
    expect(await store.replaceSealed(row!, a, testAudit())).toBe(true);
    expect(await store.replaceSealed(row!, b, testAudit())).toBe(false);
    const [stored] = (await rows(f)).filter(
      (r) => r.credential_id === row!.credentialId && r.revision === row!.revision,
    );
    expect(stored?.wrapped_key).toBe(a.wrappedKey.toString("base64"));

    // Both runs at once: every revision re-sealed exactly once between them.
    const [one, two] = await Promise.all([
      resealCredentialRevisions(store, rotated, { batchSize: 1 }),
      resealCredentialRevisions(store, rotated, { batchSize: 1 }),
    ]);
    expect(one!.resealed + two!.resealed).toBe(5);
    expect(one!.remaining + two!.remaining).toBe(0);
    expect(await openAll(f, new LocalSecretStore(nextKey))).toHaveLength(6);
  });
});
