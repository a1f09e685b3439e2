/**
 * API keys at rest, through a real server: a key made before keys were HMAC-hashed (its row holds
 * plain SHA-256, as every row did) still authenticates with the official SDK after an upgrade, and
 * its row ends up in the new scheme; no row or installation fact keeps a SHA-256 of any key.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { type RunningServer, startAllInOne } from "../../src/cli/allInOne.js";
import { MODEL } from "../support/sdkHelpers.js";
import { TEST_API_KEY } from "../support/testServer.js";

const dataDir = mkdtempSync(join(tmpdir(), "awaken-key-hashes-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function start(): Promise<RunningServer> {
  return startAllInOne(
    {
      host: "127.0.0.1",
      port: 0,
      dataDir,
      workers: 0,
      leaseMs: 5_000,
      modelIdleTimeoutMs: 300_000,
      ssePingMs: 15_000,
      apiKey: TEST_API_KEY,
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      env: {},
    },
    pino({ level: "silent" }),
  );
}

function withDb<T>(use: (db: SqliteDatabase.Database) => T): T {
  const db = new SqliteDatabase(join(dataDir, "awaken.db"));
  try {
    return use(db);
  } finally {
    db.close();
  }
}

describe("API keys at rest", () => {
  it("a key stored as SHA-256 before the upgrade authenticates after it, and is then stored as HMAC", async () => {
    let server = await start();
    const made = (await (
      await fetch(`${server.url}/v1/awaken/api_keys`, {
        method: "POST",
        headers: { "x-api-key": TEST_API_KEY, "content-type": "application/json" },
        body: JSON.stringify({ role: "builder", label: "before" }),
      })
    ).json()) as { id: string; key: string };
    await server.stop();

    // The database as the previous build left it: every key, and the bootstrap fact, plain SHA-256.
    withDb((db) => {
      db.prepare("UPDATE api_keys SET key_hash = ?, hash_scheme = 'sha256' WHERE id = ?").run(
        sha256(made.key),
        made.id,
      );
      db.prepare("UPDATE api_keys SET key_hash = ?, hash_scheme = 'sha256' WHERE label = 'default'").run(
        sha256(TEST_API_KEY),
      );
      db.prepare("UPDATE installation_facts SET value = ? WHERE name = 'bootstrap_api_key'").run(
        sha256(TEST_API_KEY),
      );
    });

    server = await start();
    try {
      const client = new Anthropic({ apiKey: made.key, baseURL: server.url, maxRetries: 0 });
      const agent = await client.beta.agents.create({ name: "after-upgrade", model: MODEL });
      expect(agent.id).toMatch(/^agent_/);
      const admin = new Anthropic({ apiKey: TEST_API_KEY, baseURL: server.url, maxRetries: 0 });
      await admin.beta.agents.list();

      const rows = withDb(
        (db) =>
          db.prepare("SELECT id, label, key_hash, hash_scheme FROM api_keys ORDER BY id").all() as {
            id: string;
            label: string;
            key_hash: string;
            hash_scheme: string;
          }[],
      );
      // One default key (the start did not add a second), both rows moved to the new scheme.
      expect(rows.map((r) => r.label).sort()).toEqual(["before", "default"]);
      for (const r of rows) {
        expect(r.hash_scheme).toMatch(/^hmac-sha256:/);
        expect(r.key_hash).toMatch(/^[0-9a-f]{64}$/);
      }
      const everything = withDb((db) =>
        JSON.stringify([
          db.prepare("SELECT * FROM api_keys").all(),
          db.prepare("SELECT * FROM installation_facts").all(),
          db.prepare("SELECT * FROM admin_audit").all(),
        ]),
      );
      for (const secret of [made.key, TEST_API_KEY]) {
        expect(everything).not.toContain(secret);
        expect(everything).not.toContain(sha256(secret));
      }
    } finally {
      await server.stop();
    }
  });
});
