/**
 * `awaken secrets rotate-master-key` and `awaken secrets reseal` as an operator runs them: the real
 * `bin/awaken.js` in a child process, against a data dir (SQLite) and a PostgreSQL schema that a
 * real server filled through the official SDK, then that server restarted with only the new key,
 * validating (a live probe that opens the re-sealed credential) against a real MCP server.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import pg from "pg";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { loadMasterKey, masterKeyId } from "../../src/secrets/masterKey.js";
import { runAwaken } from "../support/awakenCli.js";
import { type BearerMcpServer, startBearerMcpServer } from "../support/bearerMcpServer.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { TEST_API_KEY } from "../support/testServer.js";

const cleanups: Array<() => Promise<void> | void> = [];
let mcp: BearerMcpServer;

beforeAll(async () => {
  mcp = await startBearerMcpServer();
});
afterAll(async () => {
  await mcp.close();
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-secrets-cli-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const awaken = (args: string[], env: Record<string, string> = {}) =>
  runAwaken(args, { AWAKEN_LOG_LEVEL: "warn", ...env });

async function server(dataDir: string, env: Record<string, string>, databaseUrl?: string) {
  const running: RunningServer = await startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      databaseUrl,
      workers: 0,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: TEST_API_KEY,
      retry: {},
      env,
      // The MCP server its credentials are validated against listens on the loopback.
      allowPrivateHosts: "127.0.0.1",
    },
    pino({ level: "silent" }),
  );
  const client = new Anthropic({ baseURL: running.url, apiKey: TEST_API_KEY, maxRetries: 0 });
  return { running, client };
}

/** Three revisions: a static_bearer rotated once (both tokens valid at the MCP server) and an mcp_oauth. */
async function fill(client: Anthropic) {
  const first = `cli-token-${randomBytes(8).toString("hex")}`;
  const second = `cli-token-${randomBytes(8).toString("hex")}`;
  mcp.accepted.add(first);
  mcp.accepted.add(second);
  const vault = await client.beta.vaults.create({ display_name: "rotation" });
  const bearer = await client.beta.vaults.credentials.create(vault.id, {
    auth: { type: "static_bearer", token: first, mcp_server_url: mcp.url },
  });
  await client.beta.vaults.credentials.update(bearer.id, {
    vault_id: vault.id,
    auth: { type: "static_bearer", token: second },
  });
  await client.beta.vaults.credentials.create(vault.id, {
    auth: {
      type: "mcp_oauth",
      access_token: "oauth-access",
      mcp_server_url: "https://other.example.com/mcp",
    },
  });
  return { vault, bearer };
}

describe("awaken secrets", () => {
  it("--help documents both steps of a rotation and when the old key can go", async () => {
    const rotate = await awaken(["secrets", "rotate-master-key", "--help"]);
    const reseal = await awaken(["secrets", "reseal", "--help"]);
    for (const text of [
      "--new-key-file",
      "--data-dir",
      "awaken secrets reseal",
      "master.key.retired-",
      "AWAKEN_MASTER_KEY_RETIRED",
      "Drop the retired key",
    ]) {
      expect(rotate.stdout).toContain(text);
    }
    for (const text of ["--database-url", "--batch-size", "--limit", "run again", "PostgreSQL"]) {
      expect(reseal.stdout).toContain(text);
    }
  }, 60_000);

  it("SQLite: rotate, refuse without the old key, reseal partly, resume, run again; the server then needs only the new key", async () => {
    const dataDir = tempDir();
    const first = await server(dataDir, {});
    const { vault, bearer } = await fill(first.client);
    await first.running.stop();
    const oldId = loadMasterKey({ env: {}, dataDir, generate: false }).masterKey.id;

    const rotated = await awaken(["secrets", "rotate-master-key", "--data-dir", dataDir]);
    expect(rotated.code).toBe(0);
    const newId = loadMasterKey({ env: {}, dataDir, generate: false }).masterKey.id;
    expect(newId).not.toBe(oldId);
    const retiredFile = join(dataDir, `master.key.retired-${oldId}`);
    expect(statSync(retiredFile).mode & 0o777).toBe(0o600);
    expect(rotated.stdout).toContain(`current  ${newId}`);
    expect(rotated.stdout).toContain(`retired  ${oldId}  ${retiredFile}`);
    expect(rotated.stdout).toContain("awaken secrets reseal");

    // Without the retired key it refuses to start and changes nothing.
    renameSync(retiredFile, join(dataDir, "kept-aside"));
    const refused = await awaken(["secrets", "reseal", "--data-dir", dataDir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`3 revision(s) are sealed under master key ${oldId}`);
    expect(refused.stderr).toContain("Nothing was changed");
    renameSync(join(dataDir, "kept-aside"), retiredFile);

    const partial = await awaken([
      "secrets",
      "reseal",
      "--data-dir",
      dataDir,
      "--batch-size",
      "1",
      "--limit",
      "1",
    ]);
    expect(partial.code).toBe(0);
    expect(partial.stdout).toContain(`current master key ${newId}`);
    expect(partial.stdout).toContain(`retired master key ${oldId} (${retiredFile})`);
    expect(partial.stdout).toContain("re-sealed 1 of 3");
    expect(partial.stdout).toContain("Stopped early: 2 revision(s) still under retired keys");

    const rest = await awaken(["secrets", "reseal", "--data-dir", dataDir]);
    expect(rest.code).toBe(0);
    expect(rest.stdout).toContain("done: 2 re-sealed, 0 skipped");
    expect(rest.stdout).toContain(`${newId}: 3 revision(s) (current)`);
    expect(rest.stdout).toContain(`The retired key(s) ${oldId} can be dropped`);
    const again = await awaken(["secrets", "reseal", "--data-dir", dataDir]);
    expect(again.stdout).toContain(
      "done: 0 re-sealed, 0 skipped (changed or deleted meanwhile), 0 not under",
    );

    const db = new SqliteDatabase(join(dataDir, "awaken.db"), { readonly: true });
    const keys = db.prepare("select master_key_id from vault_credential_revisions").all() as Array<{
      master_key_id: string;
    }>;
    db.close();
    expect(keys.map((k) => k.master_key_id)).toEqual([newId, newId, newId]);

    // Drop the old key: the server opens the re-sealed credential with the new key alone.
    rmSync(retiredFile);
    const restarted = await server(dataDir, {});
    try {
      const validation = await restarted.client.beta.vaults.credentials.mcpOAuthValidate(bearer.id, {
        vault_id: vault.id,
      });
      expect(validation.status).toBe("valid");
    } finally {
      await restarted.running.stop();
    }
  }, 120_000);

  it.skipIf(postgresUnavailable() !== null)(
    "PostgreSQL: keys from the environment; reseal --database-url; the server then needs only the new key",
    async () => {
      const schema = await emptySchema();
      cleanups.push(() => schema.drop());
      const dataDir = tempDir();
      const oldKey = randomBytes(32).toString("base64");
      const newKey = randomBytes(32).toString("base64");
      const oldId = masterKeyId(Buffer.from(oldKey, "base64"));
      const newId = masterKeyId(Buffer.from(newKey, "base64"));
      const first = await server(dataDir, { AWAKEN_MASTER_KEY: oldKey }, schema.url);
      const { vault, bearer } = await fill(first.client);
      await first.running.stop();

      // Env-based keys are not the command's to rotate: it says how instead.
      const rotate = await awaken(["secrets", "rotate-master-key", "--data-dir", dataDir], {
        AWAKEN_MASTER_KEY: oldKey,
      });
      expect(rotate.code).toBe(1);
      expect(rotate.stderr).toContain("AWAKEN_MASTER_KEY_RETIRED=<old key>");
      expect(existsSync(join(dataDir, "master.key"))).toBe(false);

      const env = { AWAKEN_MASTER_KEY: newKey, AWAKEN_MASTER_KEY_RETIRED: oldKey };
      const resealed = await awaken(
        ["secrets", "reseal", "--database-url", schema.url, "--data-dir", dataDir, "--batch-size", "2"],
        env,
      );
      expect(resealed.stderr).toBe("");
      expect(resealed.code).toBe(0);
      expect(resealed.stdout).toContain(`(schema ${schema.schema})`);
      expect(resealed.stdout).toContain("re-sealed 2 of 3");
      expect(resealed.stdout).toContain("done: 3 re-sealed, 0 skipped");
      expect(resealed.stdout).toContain(`The retired key(s) ${oldId} can be dropped`);
      expect(resealed.stdout).not.toContain(oldKey);
      expect(resealed.stdout).not.toContain(newKey);
      const again = await awaken(
        ["secrets", "reseal", "--database-url", schema.url, "--data-dir", dataDir],
        env,
      );
      expect(again.stdout).toContain("done: 0 re-sealed");

      const client = new pg.Client({ connectionString: schema.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ master_key_id: string }>(
          "select master_key_id from vault_credential_revisions",
        );
        expect(rows.map((r) => r.master_key_id)).toEqual([newId, newId, newId]);
      } finally {
        await client.end();
      }

      const restarted = await server(dataDir, { AWAKEN_MASTER_KEY: newKey }, schema.url);
      try {
        const validation = await restarted.client.beta.vaults.credentials.mcpOAuthValidate(bearer.id, {
          vault_id: vault.id,
        });
        expect(validation.status).toBe("valid");
      } finally {
        await restarted.running.stop();
      }
    },
    120_000,
  );
});
