/**
 * Replicas on one PostgreSQL database agree on one master key and one bootstrap API key: the real
 * `awaken up` in child processes, each with its own data dir, on a schema of their own.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { masterKeyId } from "../../src/secrets/masterKey.js";
import { runAwaken } from "../support/awakenCli.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

let schema: Awaited<ReturnType<typeof emptySchema>> | undefined;
const running: ServerProcess[] = [];
const dirs: string[] = [];

beforeEach(async (ctx) => {
  const reason = postgresUnavailable();
  if (reason) ctx.skip(reason);
  schema = await emptySchema();
});
afterEach(async () => {
  for (const p of running.splice(0)) {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await schema?.drop();
  schema = undefined;
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-replica-key-"));
  dirs.push(dir);
  return dir;
}

async function replica(
  dir: string,
  env: Record<string, string> = {},
  databaseUrl: "flag" | "environment" = "flag",
): Promise<ServerProcess> {
  const p = await startServerProcess({
    dataDir: dir,
    env: databaseUrl === "environment" ? { ...env, AWAKEN_DATABASE_URL: schema!.url } : env,
    args: [...(databaseUrl === "flag" ? ["--database-url", schema!.url] : []), "--workers", "0"],
  });
  running.push(p);
  return p;
}

/** `awaken up` that is expected to exit by itself (a refusal). */
function refusedUp(dir: string, env: Record<string, string> = {}) {
  return runAwaken(["up", "--port", "0", "--data-dir", dir, "--database-url", schema!.url], {
    AWAKEN_LOG_LEVEL: "warn",
    ...env,
  });
}

async function query<R extends pg.QueryResultRow>(text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: schema!.url });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

function bannerKey(p: ServerProcess): string {
  const key = /API key: (sk-awaken-\S+)/.exec(p.stdout())?.[1];
  if (!key) throw new Error(`no API key in the banner:\n${p.stdout()}`);
  return key;
}

describe("replicas on one PostgreSQL database", () => {
  it("a second replica without AWAKEN_MASTER_KEY refuses to start, says what to set, and generates no key", async () => {
    const firstDir = dataDir();
    await replica(firstDir);
    const firstKey = Buffer.from(readFileSync(join(firstDir, "master.key"), "utf8").trim(), "base64");
    const recorded = await query<{ value: string }>(
      "select value from installation_facts where name = 'master_key_id'",
    );
    expect(recorded).toEqual([{ value: masterKeyId(firstKey) }]);

    const second = dataDir();
    const refused = await refusedUp(second);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`sealed under master key ${recorded[0]?.value}`);
    expect(refused.stderr).toContain("set AWAKEN_MASTER_KEY");
    expect(refused.stderr).toContain("same value on every replica");
    expect(refused.stdout).not.toContain("listening on");
    expect(existsSync(join(second, "master.key"))).toBe(false);
    expect(existsSync(join(second, "api-key"))).toBe(false);

    // A replica with a key of its own (another data dir's, or a wrong AWAKEN_MASTER_KEY) too.
    const other = randomBytes(32).toString("base64");
    const wrong = await refusedUp(dataDir(), { AWAKEN_MASTER_KEY: other });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(`its master key is ${masterKeyId(Buffer.from(other, "base64"))}`);
    expect(wrong.stderr).toContain("set AWAKEN_MASTER_KEY");
    expect(wrong.stderr).not.toContain(other);
  }, 60_000);

  it("with one AWAKEN_MASTER_KEY both start; only the first mints and prints a bootstrap API key", async () => {
    const env = { AWAKEN_MASTER_KEY: randomBytes(32).toString("base64") };
    const a = await replica(dataDir(), env);
    const secondDir = dataDir();
    // The second takes its database from AWAKEN_DATABASE_URL: no password in its process list.
    const b = await replica(secondDir, env, "environment");
    const argv = readFileSync(`/proc/${b.child.pid}/cmdline`, "utf8");
    expect(argv).not.toContain(schema!.url);
    const key = bannerKey(a);
    expect(b.stdout()).not.toMatch(/sk-awaken-/);
    expect(b.stdout()).toContain("the one printed when this database was first started");
    expect(existsSync(join(secondDir, "api-key"))).toBe(false);
    expect(await query("select id from api_keys")).toHaveLength(1);

    // The first replica's key works on the second.
    const client = new Anthropic({ baseURL: b.url, apiKey: key, maxRetries: 0 });
    const vault = await client.beta.vaults.create({ display_name: "shared" });
    const viaA = new Anthropic({ baseURL: a.url, apiKey: key, maxRetries: 0 });
    expect((await viaA.beta.vaults.retrieve(vault.id)).id).toBe(vault.id);
  }, 60_000);
});
