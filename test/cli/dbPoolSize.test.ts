import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { emptySchema, postgresUnavailable, testDatabaseUrl } from "../support/postgresFixtures.js";

const BIN = fileURLToPath(new URL("../../bin/awaken.js", import.meta.url));
const run = promisify(execFile);
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function refused(args: string[]): Promise<string> {
  const error = await run(process.execPath, [BIN, "up", ...args], {
    env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn" },
  }).catch((e: { code: number; stderr: string }) => e);
  expect((error as { code: number }).code).not.toBe(0);
  return (error as { stderr: string }).stderr;
}

describe("awaken up --db-pool-size", () => {
  it("--help documents it with its default", async () => {
    const { stdout } = await run(process.execPath, [BIN, "up", "--help"]);
    expect(stdout).toMatch(/--db-pool-size <n>[\s\S]*PostgreSQL[\s\S]*connections[\s\S]*\(default:\s+20\)/);
  });

  it("refuses a size that is not an integer ≥ 1, naming the option", async () => {
    for (const bad of ["0", "2.5"]) {
      expect(await refused(["--db-pool-size", bad])).toContain("--db-pool-size must be an integer ≥ 1");
    }
  });
});

describe.skipIf(postgresUnavailable() !== null)("awaken up --db-pool-size on PostgreSQL", () => {
  it("the server's pool opens at most that many connections, whatever the load", async () => {
    const schema = await emptySchema();
    cleanups.push(() => schema.drop());
    const dataDir = mkdtempSync(join(tmpdir(), "awaken-pool-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // A name of its own, so only this server's connections are counted on the shared database.
    const appName = `awaken_pool_${randomBytes(6).toString("hex")}`;
    const url = new URL(schema.url);
    url.searchParams.set("application_name", appName);

    const child = spawn(
      process.execPath,
      [
        BIN,
        ...["up", "--port", "0", "--data-dir", dataDir, "--database-url", url.toString()],
        ...["--db-pool-size", "2", "--workers", "0"],
      ],
      {
        env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn", AWAKEN_API_KEY: "sk-awaken-pool-test" },
        stdio: ["ignore", "pipe", "pipe"],
      },
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
        if (/Storage: .*\n/.test(out)) resolve();
      });
      exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
    });
    expect(out).toContain("pool of 2 connections");
    const base = /listening on (\S+)/.exec(out)?.[1];

    // 40 requests at once, each a database read: a larger pool would open more connections.
    const load = Array.from({ length: 40 }, () =>
      fetch(`${base}/v1/agents`, { headers: { authorization: "Bearer sk-awaken-pool-test" } }),
    );
    let peak = 0;
    const sampling = (async () => {
      for (let i = 0; i < 20; i++) {
        peak = Math.max(peak, await connectionsNamed(appName));
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();
    const responses = await Promise.all(load);
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    await sampling;
    peak = Math.max(peak, await connectionsNamed(appName));
    // The pool's two, plus the one connection that LISTENs for wake-ups.
    expect(peak).toBeGreaterThanOrEqual(2);
    expect(peak).toBeLessThanOrEqual(3);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 30_000);
});

async function connectionsNamed(appName: string): Promise<number> {
  const client = new pg.Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where application_name = $1",
      [appName],
    );
    return rows[0]?.n ?? 0;
  } finally {
    await client.end();
  }
}
