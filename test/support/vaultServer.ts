import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { pino } from "pino";
import { startAllInOne } from "../../src/cli/allInOne.js";
import type { CredentialRevision } from "../../src/control/vaultPorts.js";
import { LocalSecretStore } from "../../src/secrets/localSecretStore.js";
import { loadMasterKey } from "../../src/secrets/masterKey.js";
import { decodeFields } from "../../src/secrets/secretFields.js";
import { toRevision } from "../../src/stores/sql/credentialRows.js";
import type { Database } from "../../src/stores/sql/schema.js";
import { TEST_API_KEY, type TestServer } from "./testServer.js";

/** A secret no other test or fixture could produce by accident. */
/**
 * An SDK client that keeps every response body it reads in `bodies`, so a test can search them all
 * for a planted secret.
 */
export function recordingClient(baseURL: string, bodies: string[], apiKey: string = TEST_API_KEY): Anthropic {
  return new Anthropic({
    baseURL,
    apiKey,
    maxRetries: 0,
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      bodies.push(await response.clone().text());
      return response;
    },
  });
}

export function plantedSecret(label: string): string {
  return `planted-${label}-${randomBytes(12).toString("hex")}`;
}

export interface VaultTestServer extends TestServer {
  /** Every response body the SDK client received, as text. */
  bodies: string[];
  /** Every line the server logged (level trace). */
  logs: string[];
  /** A second, direct connection to the server's SQLite file, for reading and tampering with rows. */
  sql: SqliteDatabase.Database;
  revisions(credentialId: string): CredentialRevision[];
  /** Opens a revision the way admission will: identity from the row, key from the data dir. */
  openRevision(revision: CredentialRevision): Promise<Record<string, string>>;
}

/**
 * The all-in-one server on SQLite with its log captured and every SDK response body recorded, so a
 * test can search all of them (and the database) for a planted secret.
 */
export async function startVaultTestServer(
  options: {
    /** `--allow-private-mcp-host` (testServer.ts `LOOPBACK`); unset, the loopback is refused. */ allowPrivateHosts?: string;
  } = {},
): Promise<VaultTestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "awaken-vaults-"));
  const logs: string[] = [];
  const bodies: string[] = [];
  const server = await startAllInOne(
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
      allowPrivateHosts: options.allowPrivateHosts,
    },
    pino({ level: "trace" }, { write: (line: string) => logs.push(line) }),
  );
  const client = recordingClient(server.url, bodies);
  const sql = new SqliteDatabase(join(dataDir, "awaken.db"));
  sql.pragma("busy_timeout = 5000");
  const store = new LocalSecretStore(loadMasterKey({ env: {}, dataDir }).masterKey);
  return {
    server,
    client,
    dataDir,
    bodies,
    logs,
    sql,
    revisions: (credentialId) =>
      (
        sql
          .prepare("select * from vault_credential_revisions where credential_id = ? order by revision")
          .all(credentialId) as Database["vault_credential_revisions"][]
      ).map(toRevision),
    openRevision: async (revision) => {
      const plaintext = await store.open(
        {
          credentialId: revision.credentialId,
          revision: revision.revision,
          workspaceId: revision.workspaceId,
        },
        revision.sealed,
      );
      const fields = Object.fromEntries(
        [...decodeFields(plaintext)].map(([k, v]) => [k, v.toString("utf8")]),
      );
      plaintext.fill(0);
      return fields;
    },
    close: async () => {
      sql.close();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
