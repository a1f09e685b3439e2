/**
 * A revision with packages: an environment revision's packages are prepared once per
 * exact content on the worker's host before a session of it exists (creation waits; a package that
 * cannot be prepared refuses the session with a 400 naming it), and its sandboxes see them
 * read-only. Through the official SDK, with no network: the npm package is a tarball packed here,
 * and the server's installers run with `npm_config_offline=true`.
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import {
  BAD_REQUEST,
  history,
  isEndTurnIdle,
  MODEL,
  textOf,
  userMessage,
  type WireEvent,
  waitForHistory,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

const PACKAGE = "awaken-fixture-greeting";
const GREETING = "hello from the prepared package";

let fake: FakeModelServer;
let t: TestServer;
let fixtureDir: string;
let tarball: string;

beforeAll(async () => {
  fixtureDir = mkdtempSync(join(tmpdir(), "awaken-pkg-fixture-"));
  const source = join(fixtureDir, "src");
  mkdirSync(source);
  writeFileSync(
    join(source, "package.json"),
    JSON.stringify({ name: PACKAGE, version: "1.0.0", main: "index.js" }),
  );
  writeFileSync(join(source, "index.js"), `module.exports = ${JSON.stringify(GREETING)};\n`);
  execFileSync("npm", ["pack", "--silent", "--pack-destination", fixtureDir], {
    cwd: source,
    env: { ...process.env, npm_config_offline: "true" },
    stdio: "ignore",
  });
  tarball = join(fixtureDir, `${PACKAGE}-1.0.0.tgz`);
  expect(existsSync(tarball)).toBe(true);
  fake = await startFakeAnthropic();
  t = await startTestServer({
    env: {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: fake.url,
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // No registry may be reached: a mistake fails instead of going to the network.
      npm_config_offline: "true",
      npm_config_registry: "http://127.0.0.1:9/",
    },
    workerPollMs: 50,
  });
  // bwrap's sandbox uids must be able to pass through to their workspaces and the packages.
  const workspaces = join(t.dataDir, "workspaces");
  mkdirSync(workspaces, { recursive: true });
  chmodSync(t.dataDir, 0o711);
  chmodSync(workspaces, 0o711);
});
afterAll(async () => {
  await t.close();
  await fake.close();
  rmSync(fixtureDir, { recursive: true, force: true });
});
beforeEach(() => {
  fake.setFallback({ kind: "text", text: "ok" });
});

const packagesRoot = () => join(t.dataDir, "workspaces", ".packages");
/** Prepared sets (marked ready), and anything else left in the packages directory. */
function preparedSets(): { ready: string[]; other: string[] } {
  const names = existsSync(packagesRoot()) ? readdirSync(packagesRoot()) : [];
  const ready = names.filter((name) => existsSync(join(packagesRoot(), name, ".ready")));
  return { ready, other: names.filter((name) => !ready.includes(name)) };
}

async function environment(packages: Record<string, string[]>, tier: "none" | "bwrap" = "none") {
  return t.client.beta.environments.create({
    name: "pkgs",
    config: { type: "cloud", packages: { type: "packages", ...packages }, sandbox: { tier } } as never,
  });
}

async function agent() {
  return t.client.beta.agents.create({
    name: "pkgs",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }],
  });
}

async function bash(sessionId: string, command: string): Promise<WireEvent> {
  const before = (await history(t.client, sessionId)).filter(isEndTurnIdle).length;
  fake.enqueue({ kind: "tool_use", name: "bash", input: { command } });
  await t.client.beta.sessions.events.send(sessionId, { events: [userMessage("go")] });
  const events = await waitForHistory(
    t.client,
    sessionId,
    (h) => h.filter(isEndTurnIdle).length > before,
    20_000,
  );
  const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
  expect(result).toBeDefined();
  return result!;
}

const USE_PACKAGE = `node -e "console.log(require('${PACKAGE}'))"`;

describe("environment packages", () => {
  it("prepares an npm package once per content before the session; sandboxes of every tier see it", async () => {
    const a = await agent();
    const env = await environment({ npm: [tarball] });
    const first = await t.client.beta.sessions.create({ agent: a.id, environment_id: env.id });
    // Prepared before creation answered.
    const after = preparedSets();
    expect(after.ready).toHaveLength(1);
    expect(after.other).toEqual([]);
    const set = join(packagesRoot(), after.ready[0]!);
    expect(existsSync(join(set, "npm", "node_modules", PACKAGE, "index.js"))).toBe(true);
    const readyAt = statSync(join(set, ".ready")).mtimeMs;

    // Same revision, and another environment with the same content: the cache is reused.
    const second = await t.client.beta.sessions.create({ agent: a.id, environment_id: env.id });
    const sameContent = await environment({ npm: [tarball] }, "bwrap");
    const third = await t.client.beta.sessions.create({ agent: a.id, environment_id: sameContent.id });
    expect(preparedSets().ready).toEqual(after.ready);
    expect(statSync(join(set, ".ready")).mtimeMs).toBe(readyAt);

    // none tier: the host directory, through NODE_PATH.
    const none = await bash(first.id, USE_PACKAGE);
    expect(none.is_error).toBe(false);
    expect(textOf(none)).toContain(GREETING);
    expect(second.id).not.toBe(first.id);

    // bwrap tier: bound read-only at /opt/awaken/packages.
    const inBwrap = await bash(
      third.id,
      `${USE_PACKAGE} && echo "$NODE_PATH" && touch /opt/awaken/packages/x`,
    );
    expect(textOf(inBwrap)).toContain(GREETING);
    expect(textOf(inBwrap)).toContain("/opt/awaken/packages/npm/node_modules");
    expect(textOf(inBwrap)).toMatch(/Read-only file system|Permission denied/);
    expect(existsSync(join(set, "x"))).toBe(false);
    expect(statSync(join(set, ".ready")).mtimeMs).toBe(readyAt);
  });

  it("refuses a session whose revision lists apt packages (400 naming apt), never skipping them", async () => {
    const a = await agent();
    const env = await environment({ apt: ["cowsay"] });
    const before = preparedSets();
    await expect(
      t.client.beta.sessions.create({ agent: a.id, environment_id: env.id }),
    ).rejects.toMatchObject({
      status: BAD_REQUEST.status,
      message: expect.stringMatching(/config\.packages\.apt \(cowsay\).*bake them into the worker host/s),
    });
    expect(preparedSets()).toEqual(before);
  });

  it("refuses a session whose npm package cannot be installed, with npm's error; nothing is marked ready", async () => {
    const a = await agent();
    const missing = join(fixtureDir, "does-not-exist-1.0.0.tgz");
    const env = await environment({ npm: [tarball, missing] });
    const before = preparedSets();
    await expect(
      t.client.beta.sessions.create({ agent: a.id, environment_id: env.id }),
    ).rejects.toMatchObject({
      status: BAD_REQUEST.status,
      message: expect.stringMatching(
        /config\.packages\.npm .*could not be installed: npm exited with \d+.*ENOENT/s,
      ),
    });
    expect(preparedSets()).toEqual(before);
    const sessions = [];
    for await (const s of t.client.beta.sessions.list()) if (s.environment_id === env.id) sessions.push(s);
    expect(sessions).toEqual([]);
  });
});
