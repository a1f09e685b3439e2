import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/awaken.js", import.meta.url));
const run = promisify(execFile);
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-cli-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts `awaken up` without AWAKEN_API_KEY and returns what it printed once it listens. */
async function upOnce(dataDir: string): Promise<{ out: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, "up", "--port", "0", "--data-dir", dataDir], {
    env: { PATH: process.env.PATH, AWAKEN_LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("API key:")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}`)));
  });
  return {
    out,
    stop: () =>
      new Promise((resolve) => {
        child.on("exit", (code) => resolve(code));
        child.kill("SIGTERM");
      }),
  };
}

describe("awaken up", () => {
  it("--help explains the options and labels the offline model", async () => {
    const { stdout } = await run(process.execPath, [BIN, "up", "--help"]);
    for (const text of [
      "--host",
      "--port",
      "--data-dir",
      "--database-url",
      "PostgreSQL",
      "OFFLINE",
      "AWAKEN_API_KEY",
      "ANTHROPIC_API_KEY",
    ]) {
      expect(stdout).toContain(text);
    }
  });

  it("--help of up and of worker prints each section once", async () => {
    for (const command of ["up", "worker"]) {
      const { stdout } = await run(process.execPath, [BIN, command, "--help"]);
      expect(stdout.match(/^Usage: /gm), command).toHaveLength(1);
      expect(stdout.match(/^Environment:$/gm), command).toHaveLength(1);
    }
  });

  it("rejects a bad port with a message that names the option", async () => {
    const error = await run(process.execPath, [BIN, "up", "--port", "abc"]).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((error as { code: number }).code).not.toBe(0);
    expect((error as { stderr: string }).stderr).toContain("--port must be a port number from 0 to 65535");
  });

  it("generates an API key once, stores it 0600 in the data dir, prints it that once, and reuses it after a restart", async () => {
    const dataDir = tempDir();
    const first = await upOnce(dataDir);
    const url = /listening on (\S+)/.exec(first.out)?.[1];
    const key = /API key: (\S+)/.exec(first.out)?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(key).toMatch(/^sk-awaken-/);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const authed = await fetch(`${url}/v1/agents`, { headers: { authorization: `Bearer ${key}` } });
    expect(authed.status).toBe(200);
    expect(readFileSync(join(dataDir, "api-key"), "utf8").trim()).toBe(key);
    expect(statSync(join(dataDir, "api-key")).mode & 0o777).toBe(0o600);
    // Stopped the moment the banner is read: SIGTERM must still be a clean stop (exit 0).
    expect(await first.stop()).toBe(0);

    // A restart says where the key is kept and never prints it again (stdout often ends in a log).
    const second = await upOnce(dataDir);
    expect(second.out).not.toContain(key);
    expect(second.out).toContain(`API key: stored in ${dataDir}/api-key`);
    const url2 = /listening on (\S+)/.exec(second.out)?.[1];
    const again = await fetch(`${url2}/v1/agents`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    expect(await second.stop()).toBe(0);
  }, 30_000);
});
