import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { KNOWN_MIGRATIONS } from "../../src/stores/sql/migrations/index.js";
import { emptySchema, postgresUnavailable } from "../support/postgresFixtures.js";

const BIN = fileURLToPath(new URL("../../bin/awaken.js", import.meta.url));
const run = promisify(execFile);
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-migrate-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function migrate(...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [BIN, "migrate", ...args], {
    env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn" },
  });
  return stdout;
}

describe("awaken migrate", () => {
  it("--help explains both backends", async () => {
    const { stdout } = await run(process.execPath, [BIN, "migrate", "--help"]);
    for (const text of ["--data-dir", "--database-url", "SQLite", "PostgreSQL", "advisory lock"]) {
      expect(stdout).toContain(text);
    }
  });

  it("migrates the SQLite file in --data-dir, prints what it applied, and applies nothing the second time", async () => {
    const dataDir = tempDir();
    const first = await migrate("--data-dir", dataDir);
    expect(first).toContain(
      `SQLite ${join(dataDir, "awaken.db")}: applied ${KNOWN_MIGRATIONS.length} migration(s)`,
    );
    expect(first).toContain("001_initial");
    expect(first).toContain("002_self_hosted_work");
    expect(first).toContain("003_vaults");
    expect(first).toContain("004_credential_pins");
    expect(first).toContain("005_commit_append_function");
    expect(first).toContain("006_set_based_commit_append");
    expect(first).toContain("007_progress_aware_crash_reset");
    expect(first).toContain("008_installation_facts");
    expect(first).toContain("009_send_receipt_body_hash");
    expect(await migrate("--data-dir", dataDir)).toContain("already up to date, nothing applied");
  });
});

describe.skipIf(postgresUnavailable() !== null)("awaken migrate and awaken up on PostgreSQL", () => {
  it("migrate --database-url applies the schema once and reports nothing to do the second time", async () => {
    const schema = await emptySchema();
    cleanups.push(() => schema.drop());
    const first = await migrate("--database-url", schema.url);
    expect(first).toContain(`(schema ${schema.schema}): applied ${KNOWN_MIGRATIONS.length} migration(s)`);
    expect(first).toContain("001_initial");
    expect(first).toContain("002_self_hosted_work");
    expect(first).toContain("003_vaults");
    expect(first).toContain("004_credential_pins");
    expect(first).toContain("005_commit_append_function");
    expect(first).toContain("006_set_based_commit_append");
    expect(first).toContain("007_progress_aware_crash_reset");
    expect(first).toContain("008_installation_facts");
    expect(first).toContain("009_send_receipt_body_hash");
    expect(await migrate("--database-url", schema.url)).toContain("already up to date, nothing applied");
  });

  it("up --database-url serves on PostgreSQL, keeps the API key file in --data-dir, and stops cleanly", async () => {
    const schema = await emptySchema();
    cleanups.push(() => schema.drop());
    const dataDir = tempDir();
    const child = spawn(
      process.execPath,
      [BIN, "up", "--port", "0", "--data-dir", dataDir, "--database-url", schema.url],
      { env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    cleanups.push(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    let out = "";
    let err = "";
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        out += chunk;
        if (out.includes("Storage:")) resolve();
      });
      exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    expect(out).toContain(`Storage: PostgreSQL`);
    expect(out).toContain(`(schema ${schema.schema})`);
    const url = /listening on (\S+)/.exec(out)?.[1];
    const key = /API key: (\S+)/.exec(out)?.[1];
    expect(out).toContain(`(stored in ${dataDir}/api-key; printed this once)`);
    const authed = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${key}` } });
    expect(authed.status).toBe(200);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 30_000);
});
