/**
 * What `awaken` shows and leaves behind at start-up, run as a user runs it: the built
 * `bin/awaken.js` in a child process.
 */
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatLogLine } from "../../src/cli/cliLogger.js";
import { runAwaken } from "../support/awakenCli.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const PACKAGE = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "awaken-startup-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const awaken = runAwaken;

async function started(options: Parameters<typeof startServerProcess>[0]): Promise<ServerProcess> {
  const p = await startServerProcess(options);
  cleanups.push(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  });
  return p;
}

function entriesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return lstatSync(path).isDirectory() ? [path, ...entriesUnder(path)] : [path];
  });
}

function mode(path: string): string {
  return (lstatSync(path).mode & 0o777).toString(8);
}

describe("awaken at start-up", () => {
  it("--version and -V print package.json's version and exit 0", async () => {
    for (const flag of ["--version", "-V"]) {
      const result = await awaken([flag]);
      expect(result).toEqual({ code: 0, stdout: `${PACKAGE.version}\n`, stderr: "" });
    }
  });

  it("a port in use is refused, naming host:port and what to do, before anything exists in the data dir", async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen({ host: "127.0.0.1", port: 0 }, resolve));
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = (busy.address() as { port: number }).port;
    const dataDir = join(tempDir(), "fresh");

    const result = await awaken(["up", "--port", String(port), "--data-dir", dataDir]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`127.0.0.1:${port} is already in use`);
    expect(result.stderr).toContain("--port");
    expect(result.stdout).toBe("");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("the banner goes to stdout, the logs to stderr as JSON lines", async () => {
    const p = await started({ dataDir: tempDir(), env: { AWAKEN_LOG_LEVEL: "info" } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const out = p.stdout().trimEnd().split("\n");
    expect(out[0]).toMatch(/^Awaken Agents is listening on http:\/\//);
    expect(out.some((line) => line.startsWith("API key: sk-awaken-"))).toBe(true);
    expect(p.stdout()).not.toContain('"level"');
    const logs = p.stderr().trimEnd().split("\n");
    expect(logs.length).toBeGreaterThan(2);
    for (const line of logs)
      expect(JSON.parse(line)).toMatchObject({ level: expect.any(Number), msg: expect.any(String) });
    expect(p.stderr()).not.toContain("listening on http");
  });

  it("names where models run only where they run: a server without workers says it runs none", async () => {
    const withWorkers = await started({ dataDir: tempDir(), env: { AWAKEN_LOG_LEVEL: "info" } });
    expect(withWorkers.stderr()).toContain("answer offline because ANTHROPIC_API_KEY is not set");
    const without = await started({
      dataDir: tempDir(),
      env: { AWAKEN_LOG_LEVEL: "info" },
      args: ["--workers", "0"],
    });
    expect(without.stderr()).toContain("no model runs in this process (--workers 0)");
    expect(without.stderr()).not.toContain("answer offline");
  });

  it("on a terminal a log line reads as time, level, component and message", () => {
    const line = JSON.stringify({
      level: 40,
      time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
      pid: 1,
      hostname: "h",
      component: "secrets",
      msg: "hello",
      masterKeyId: "ab",
    });
    expect(formatLogLine(line)).toBe("03:04:05.006 WARN  [secrets] hello masterKeyId=ab");
    expect(formatLogLine("not json\n")).toBe("not json");
  });

  it("every entry of a fresh data dir is the server user's only (files 0600, dirs 0700) after a write", async () => {
    const dataDir = join(tempDir(), "data");
    const p = await started({ dataDir, apiKey: "sk-awaken-startup-test" });
    await p.client.beta.agents.create({ name: "modes", model: "claude-sonnet-4-5" });
    await p.client.beta.vaults.create({ display_name: "modes" });
    const entries = [dataDir, ...entriesUnder(dataDir)];
    expect(entries.map((e) => e.slice(dataDir.length))).toEqual(
      expect.arrayContaining(["", "/awaken.db", "/awaken.db-wal", "/awaken.db-shm", "/master.key"]),
    );
    for (const entry of entries) {
      expect([entry, mode(entry)]).toEqual([entry, lstatSync(entry).isDirectory() ? "700" : "600"]);
    }
  });

  it("files an older version left 0644 (and a 0755 dir) are tightened at start, with a log line", async () => {
    const dataDir = join(tempDir(), "data");
    const first = await started({ dataDir, apiKey: "sk-awaken-startup-test" });
    first.child.kill("SIGKILL");
    await first.exited;
    for (const name of ["awaken.db", "awaken.db-wal", "awaken.db-shm"]) chmodSync(join(dataDir, name), 0o644);
    chmodSync(dataDir, 0o755);
    const again = await started({ dataDir, apiKey: "sk-awaken-startup-test" });
    expect(again.stderr()).toContain("only the server's user may reach it now");
    expect(again.stderr()).toContain(`${join(dataDir, "awaken.db")} 644 → 600`);
    expect(mode(dataDir)).toBe("700");
    for (const entry of entriesUnder(dataDir)) expect([entry, mode(entry)]).toEqual([entry, "600"]);
  });
});
