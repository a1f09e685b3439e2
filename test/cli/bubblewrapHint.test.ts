import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

/** `awaken up` on a host without bubblewrap says so once at start-up, and how to install it. */

const KEY = "sk-awaken-bwrap-hint-test";
const HINT = /bubblewrap \(bwrap\) is not installed: .*apt-get install bubblewrap/g;
const dirs: string[] = [];
const servers: ServerProcess[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.child.kill("SIGTERM");
    await server.exited;
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A PATH with every tool the sandbox needs but bwrap. */
function pathWithoutBwrap(): string {
  const bin = tempDir("awaken-nobwrap-bin-");
  for (const tool of ["bash", "prlimit", "perl", "unshare", "mount", "setpriv"]) {
    symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  }
  return bin;
}

async function up(env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const server = await startServerProcess({
    dataDir: join(tempDir("awaken-hint-"), "data"),
    apiKey: KEY,
    env,
  });
  servers.push(server);
  return server;
}

describe("awaken up without bubblewrap", () => {
  it("says once on stderr that cloud built-in tools need it and how to install it", async () => {
    const server = await up({ PATH: pathWithoutBwrap() });
    // Logged at start-up; the log stream may reach the pipe just after the banner.
    for (let i = 0; i < 40 && !HINT.test(server.stderr()); i += 1)
      await new Promise((r) => setTimeout(r, 50));
    HINT.lastIndex = 0;
    expect(server.stderr().match(HINT)).toHaveLength(1);
    expect(server.stderr()).toContain("built-in tools");
    await server.client.models.list().catch(() => null);
    expect(server.stderr().match(HINT)).toHaveLength(1);
  });

  it("says nothing of it when bubblewrap is there", async () => {
    const server = await up({});
    expect(server.stderr()).not.toMatch(/apt-get install bubblewrap/);
  });
});
