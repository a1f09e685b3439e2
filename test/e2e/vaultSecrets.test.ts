import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startAllInOne } from "../../src/cli/allInOne.js";
import { SecretOpenError } from "../../src/secrets/errors.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { type MasterKey, masterKeyId } from "../../src/secrets/masterKey.js";
import { expectApiError, expectRawError, rawRequest } from "../support/sdkHelpers.js";
import { TEST_API_KEY } from "../support/testServer.js";
import { plantedSecret, startVaultTestServer, type VaultTestServer } from "../support/vaultServer.js";

// The secret never comes back (responses, logs, errors, database, data dir),
// and the sealed rows fail closed when tampered with.

let t: VaultTestServer;
beforeAll(async () => {
  t = await startVaultTestServer();
});
afterAll(async () => {
  await t.close();
});

const MCP_URL = "https://mcp.example.com/mcp";
/** Every secret any test in this file planted; the last test searches everything for each. */
const planted: string[] = [];
function secret(label: string): string {
  const value = plantedSecret(label);
  planted.push(value);
  return value;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe("tampered sealed rows fail closed", () => {
  async function twoCredentials() {
    const vault = await t.client.beta.vaults.create({ display_name: "tamper" });
    const make = (name: string) =>
      t.client.beta.vaults.credentials.create(vault.id, {
        auth: {
          type: "environment_variable",
          secret_name: name,
          secret_value: secret(name),
          networking: { type: "unrestricted" },
        },
      });
    return { vault, a: await make("A_KEY"), b: await make("B_KEY") };
  }

  async function expectNotAuthentic(open: Promise<unknown>): Promise<void> {
    const error = await open.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SecretOpenError);
    expect((error as SecretOpenError).reason).toBe("not_authentic");
  }

  it("the stored rows open only as themselves: moved ciphertext, flipped bit, stale revision, other workspace", async () => {
    const { vault, a, b } = await twoCredentials();
    const [rowA] = t.revisions(a.id);
    const [rowB] = t.revisions(b.id);
    expect(await t.openRevision(rowA!)).toEqual({ secret_value: expect.stringMatching(/^planted-A_KEY-/) });

    // A's sealed columns copied into B's row: B's identity does not open them.
    await expectNotAuthentic(t.openRevision({ ...rowB!, sealed: rowA!.sealed }));
    // One flipped bit in the material.
    const flipped = Buffer.from(rowA!.sealed.ciphertext);
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1;
    await expectNotAuthentic(t.openRevision({ ...rowA!, sealed: { ...rowA!.sealed, ciphertext: flipped } }));
    // Revision 1's record presented as revision 2 (a stale revision replayed into the newer row).
    await t.client.beta.vaults.credentials.update(a.id, {
      vault_id: vault.id,
      auth: { type: "environment_variable", secret_value: secret("A_KEY_2") },
    });
    const [, rowA2] = t.revisions(a.id);
    await expectNotAuthentic(t.openRevision({ ...rowA2!, sealed: rowA!.sealed }));
    await expectNotAuthentic(t.openRevision({ ...rowA!, workspaceId: "wrkspc_other" }));
  });

  it("a wrong master key does not open the server's rows", async () => {
    const { a } = await twoCredentials();
    const [row] = t.revisions(a.id);
    const key = Buffer.alloc(32, 7);
    const wrong: MasterKey = { id: masterKeyId(key), key };
    const error = await new LocalSecretStore(wrong)
      .open(
        { credentialId: row!.credentialId, revision: row!.revision, workspaceId: row!.workspaceId },
        row!.sealed,
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretOpenError);
    expect((error as SecretOpenError).reason).toBe("unknown_master_key");
  });

  it("the server refuses a rotation that would have to re-seal a tampered revision, and writes nothing", async () => {
    const { vault, a, b } = await twoCredentials();
    const [rowA] = t.revisions(a.id);
    // Move A's sealed material into B's row in the database itself.
    t.sql
      .prepare(
        "update vault_credential_revisions set wrapped_key = ?, sealed_material = ? where credential_id = ? and revision = 1",
      )
      .run(rowA!.sealed.wrappedKey.toString("base64"), rowA!.sealed.ciphertext.toString("base64"), b.id);
    // A networking-only change must carry B's secret into revision 2, so it has to open revision 1.
    const failure = await expectApiError(
      t.client.beta.vaults.credentials.update(b.id, {
        vault_id: vault.id,
        auth: {
          type: "environment_variable",
          networking: { type: "limited", allowed_hosts: ["x.example.com"] },
        },
      }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: [/did not open/] },
    );
    expect(failure.headers.get("x-should-retry")).toBe("false");
    expect(t.revisions(b.id)).toHaveLength(1);
  });

  it("mcp_oauth_validate of a revision sealed under a key the server lacks answers 409 naming the key, never 500", async () => {
    const vault = await t.client.beta.vaults.create({ display_name: "foreign key" });
    const credential = await t.client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: secret("foreign"), mcp_server_url: MCP_URL },
    });
    // As if another replica, holding another master key, had sealed this revision.
    t.sql
      .prepare("update vault_credential_revisions set master_key_id = ? where credential_id = ?")
      .run("0123456789abcdef", credential.id);
    const failure = await expectApiError(
      t.client.beta.vaults.credentials.mcpOAuthValidate(credential.id, { vault_id: vault.id }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: [/sealed under master key 0123456789abcdef/] },
    );
    expect(failure.headers.get("x-should-retry")).toBe("false");
  });
});

describe("the secret never comes back", () => {
  it("validation errors and malformed bodies never echo a secret value", async () => {
    const vault = await t.client.beta.vaults.create({ display_name: "errors" });
    const token = secret("echo");
    const create = (auth: unknown) =>
      t.client.beta.vaults.credentials.create(vault.id, {
        auth: auth as Anthropic.Beta.Vaults.CredentialCreateParams["auth"],
      });
    const bad: unknown[] = [
      { type: "static_bearer", token: token.repeat(2_000), mcp_server_url: MCP_URL },
      { type: "static_bearer", token, mcp_server_url: "not a url" },
      { type: "static_bearer", token, mcp_server_url: MCP_URL, extra: token },
      { type: "mcp_oauth", access_token: token, mcp_server_url: MCP_URL, expires_at: "2001-01-01T00:00:00Z" },
      { type: "mcp_oauth", access_token: token, mcp_server_url: MCP_URL, refresh: { refresh_token: token } },
      { type: "environment_variable", secret_name: "K", secret_value: token, networking: { type: "nope" } },
    ];
    for (const auth of bad) {
      const error = await expectApiError(create(auth), Anthropic.BadRequestError, {
        status: 400,
        type: "invalid_request_error",
      });
      // Not even a slice of it: every planted secret starts with "planted-".
      expect(JSON.stringify(error.error)).not.toContain("planted");
    }
    for (const body of [
      `{"auth": {"type": "static_bearer", "token": ${token}}}`,
      `{"auth": {"token": "${token}"`,
    ]) {
      const response = await rawRequest(
        { server: t.server } as never,
        "POST",
        `/v1/vaults/${vault.id}/credentials`,
        { body },
      );
      t.bodies.push(JSON.stringify(response.body));
      expect(expectRawError(response, 400, "invalid_request_error")).toMatch(/not valid JSON/);
      expect(JSON.stringify(response.body)).not.toContain("planted");
    }
  });

  it("a body logged by mistake has its secrets redacted", () => {
    const token = secret("logged");
    t.server.app.log.info({ body: { auth: { type: "static_bearer", token } } }, "a careless debug line");
    const line = t.logs.find((l) => l.includes("a careless debug line"));
    expect(line).toContain("[redacted]");
    expect(line).not.toContain(token);
  });

  it("after create, rotation, retrieve, list, archive and delete: no response, log line, row or data-dir byte holds it", async () => {
    const vault = await t.client.beta.vaults.create({ display_name: "planted" });
    const created = await t.client.beta.vaults.credentials.create(vault.id, {
      auth: {
        type: "mcp_oauth",
        access_token: secret("access"),
        mcp_server_url: MCP_URL,
        refresh: {
          refresh_token: secret("refresh"),
          client_id: "c",
          token_endpoint: "https://auth.example.com/token",
          token_endpoint_auth: { type: "client_secret_post", client_secret: secret("client") },
        },
      },
    });
    const bearer = await t.client.beta.vaults.credentials.create(vault.id, {
      auth: { type: "static_bearer", token: secret("bearer"), mcp_server_url: "https://b.example.com/mcp" },
    });
    await t.client.beta.vaults.credentials.update(created.id, {
      vault_id: vault.id,
      auth: {
        type: "mcp_oauth",
        access_token: secret("access-2"),
        refresh: { refresh_token: secret("refresh-2") },
      },
    });
    await t.client.beta.vaults.credentials.retrieve(created.id, { vault_id: vault.id });
    for await (const _ of t.client.beta.vaults.credentials.list(vault.id, { include_archived: true })) {
      // every page's body is recorded by the client's fetch
    }
    await t.client.beta.vaults.credentials.mcpOAuthValidate(created.id, { vault_id: vault.id });
    await t.client.beta.vaults.credentials.archive(bearer.id, { vault_id: vault.id });
    await t.client.beta.vaults.credentials.delete(bearer.id, { vault_id: vault.id });

    expect(planted.length).toBeGreaterThan(10);
    const rows = (
      t.sql.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>
    )
      .map(({ name }) => JSON.stringify(t.sql.prepare(`select * from "${name}"`).all()))
      .join("\n");
    expect(rows).toContain(created.id); // the scan does see the vault tables
    t.sql.pragma("wal_checkpoint(PASSIVE)");
    const files = filesUnder(t.dataDir).map((file) => readFileSync(file));
    const responses = t.bodies.join("\n");
    const logs = t.logs.join("");
    expect(responses).toContain(created.id);
    for (const value of planted) {
      const base64 = Buffer.from(value).toString("base64");
      expect(responses).not.toContain(value);
      expect(logs).not.toContain(value);
      expect(rows).not.toContain(value);
      expect(rows).not.toContain(base64);
      for (const bytes of files) expect(bytes.includes(value)).toBe(false);
    }
  });
});

describe("the master key file", () => {
  it("a key file with mode 0644 stops the server from starting, with a clear error", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-key-0644-"));
    try {
      const file = join(dataDir, "master.key");
      writeFileSync(file, `${Buffer.alloc(32, 3).toString("base64")}\n`);
      chmodSync(file, 0o644);
      const start = startAllInOne(
        {
          host: "127.0.0.1",
          port: 0,
          dataDir,
          workers: 0,
          leaseMs: 5_000,
          modelIdleTimeoutMs: 300_000,
          ssePingMs: 15_000,
          apiKey: TEST_API_KEY,
          retry: {},
          env: {},
        },
        pino({ level: "silent" }),
      );
      await expect(start).rejects.toThrow(/master key .*master\.key has mode 0644.*chmod 600/);
      // Refused before anything else was opened or created.
      expect(readdirSync(dataDir)).toEqual(["master.key"]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
