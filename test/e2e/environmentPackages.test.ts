/**
 * A revision with packages: an environment revision's packages are prepared once per
 * exact content on the worker's host before a session of it exists (creation waits; a package that
 * cannot be prepared refuses the session with a 400 naming it), and its sandboxes see them
 * read-only. Through the official SDK, with no network: the npm package is a tarball packed here,
 * served by a loopback registry the server's installers are pointed at (`npm_config_registry`).
 * Entries that are not registry requirements (options, paths, tarballs, requirements files) are
 * refused when the environment is created or updated, and again if a stored revision holds one.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import SqliteDatabase from "better-sqlite3";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeAnthropic } from "../support/fakeAnthropicServer.js";
import type { FakeModelServer } from "../support/fakeModelScript.js";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "../support/fakeNpmRegistry.js";
import {
  BAD_REQUEST,
  expectApiError,
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
let registry: FakeNpmRegistry;

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
  registry = await startFakeNpmRegistry([{ name: PACKAGE, version: "1.0.0", tarball }]);
  fake = await startFakeAnthropic();
  t = await startTestServer({
    // Its environments run tools on tier "none": the operator option enables it.
    allowWeakerTiers: true,
    env: {
      ANTHROPIC_API_KEY: "k",
      ANTHROPIC_BASE_URL: fake.url,
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      // Only the loopback registry may be reached: a mistake fails instead of going to the network.
      npm_config_registry: registry.url,
      npm_config_fetch_retries: "0",
    },
    workerPollMs: 50,
  });
  // The data dir stays 0700 as mkdtemp made it: bwrap sandboxes reach workspaces and packages all the same.
});
afterAll(async () => {
  await t.close();
  await fake.close();
  await registry.close();
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
    const env = await environment({ npm: [`${PACKAGE}@^1.0.0`] });
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
    const sameContent = await environment({ npm: [`${PACKAGE}@^1.0.0`] }, "bwrap");
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

  it("refuses a session whose npm package cannot be installed, with npm's error cut and scrubbed; nothing is marked ready", async () => {
    const a = await agent();
    const env = await environment({ npm: [`${PACKAGE}@1.0.0`, "awaken-fixture-missing@1.0.0"] });
    const before = preparedSets();
    const failure = await t.client.beta.sessions
      .create({ agent: a.id, environment_id: env.id })
      .catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
    expect(failure).toMatchObject({
      status: BAD_REQUEST.status,
      message: expect.stringMatching(
        /config\.packages\.npm .*could not be installed: npm exited with \d+.*404 Not Found.*awaken-fixture-missing/s,
      ),
    });
    const body = JSON.stringify((failure as { error?: unknown }).error);
    expect(body.length).toBeLessThan(2_500);
    expect(body).not.toContain(t.dataDir);
    expect(body).not.toContain(`${tmpdir()}/awaken-prepare-`);
    // npm names its debug log; it lives in the installer's scratch home, never the server's.
    expect(body).toContain("<scratch>/home/.npm/_logs/");
    expect(body).not.toContain(`${homedir()}/`);
    expect(registry.requested).toContain("awaken-fixture-missing");
    expect(preparedSets()).toEqual(before);
    const sessions = [];
    for await (const s of t.client.beta.sessions.list()) if (s.environment_id === env.id) sessions.push(s);
    expect(sessions).toEqual([]);
  });
});

describe("package entries that are not registry requirements", () => {
  const refused = (call: Promise<unknown>, ...message: string[]) =>
    expectApiError(call, Anthropic.BadRequestError, { ...BAD_REQUEST, message });

  it("the npm tarball attack is refused at environment create with a 400 naming the entry", async () => {
    const evil = join(fixtureDir, "evil-1.0.0.tgz");
    await refused(
      environment({ npm: ["--offline", "--ignore-scripts=false", evil] }),
      'config.packages.npm[0]: "--offline" is not a package requirement (expected name or name@version-range',
    );
    await refused(
      environment({ npm: ["lodash", evil] }),
      `config.packages.npm[1]: ${JSON.stringify(evil)} is not a package requirement`,
    );
  });

  it("the pip master.key attack is refused at environment create; no key bytes anywhere in the response", async () => {
    const keyFile = join(t.dataDir, "master.key");
    const key = readFileSync(keyFile, "utf8").trim();
    expect(key.length).toBeGreaterThan(16);
    const failure = await refused(
      environment({ pip: ["--no-index", "-r", keyFile] }),
      'config.packages.pip[0]: "--no-index" is not a package requirement',
    );
    const seen = [
      failure.message,
      JSON.stringify(failure.error),
      JSON.stringify([...failure.headers.entries()]),
    ];
    for (const text of seen) {
      expect(text).not.toContain(key);
      for (const line of key.split("\n")) if (line.length >= 8) expect(text).not.toContain(line);
    }
    await refused(
      environment({ pip: ["requests", "-r", keyFile] }),
      'config.packages.pip[1]: "-r" is not a package requirement',
    );
  });

  it("an environment update with such an entry is refused the same way, and the revision stays", async () => {
    const env = await environment({ npm: [`${PACKAGE}@1`] });
    await refused(
      t.client.beta.environments.update(env.id, {
        config: { type: "cloud", packages: { type: "packages", npm: ["file:../evil"] } },
      } as never),
      'config.packages.npm[0]: "file:../evil" is not a package requirement',
    );
    const after = await t.client.beta.environments.retrieve(env.id);
    expect(after.config).toMatchObject({ packages: { npm: [`${PACKAGE}@1`] } });
  });

  it("a stored revision holding one (written before the rule) refuses the session; no installer runs", async () => {
    const a = await agent();
    const env = await environment({ npm: [`${PACKAGE}@1.0.0`] });
    const db = new SqliteDatabase(join(t.dataDir, "awaken.db"));
    try {
      const row = db
        .prepare("select revision, config_json from environment_revisions where environment_id = ?")
        .get(env.id) as { revision: number; config_json: string };
      const config = JSON.parse(row.config_json);
      config.packages.npm = ["--ignore-scripts=false", tarball];
      db.prepare(
        "update environment_revisions set config_json = ? where environment_id = ? and revision = ?",
      ).run(JSON.stringify(config), env.id, row.revision);
    } finally {
      db.close();
    }
    const asked = registry.requested.length;
    const before = preparedSets();
    await refused(
      t.client.beta.sessions.create({ agent: a.id, environment_id: env.id }),
      'config.packages.npm[0]: "--ignore-scripts=false" is not a package requirement',
    );
    expect(registry.requested.length).toBe(asked);
    expect(preparedSets()).toEqual(before);
  });
});

describe("the frozen resolution", () => {
  /** The revision's recorded resolution (id and the versions its lockfile pins), read from the store. */
  function recordedResolution(environmentId: string): { id: string; pinned: string } | null {
    const db = new SqliteDatabase(join(t.dataDir, "awaken.db"), { readonly: true });
    try {
      const row = db
        .prepare(
          "select resolution_id, content_json from environment_package_resolutions where environment_id = ?",
        )
        .get(environmentId) as { resolution_id: string; content_json: string } | undefined;
      if (!row) return null;
      const content = JSON.parse(row.content_json);
      return {
        id: row.resolution_id,
        pinned: content.npm.lockfile.packages[`node_modules/${PACKAGE}`].version,
      };
    } finally {
      db.close();
    }
  }

  function realizedFacts(sessionId: string): Array<Record<string, unknown>> {
    const db = new SqliteDatabase(join(t.dataDir, "awaken.db"), { readonly: true });
    try {
      const rows = db
        .prepare("select body_json from events where session_id = ? and type = 'awaken.sandbox_realized'")
        .all(sessionId) as Array<{ body_json: string }>;
      return rows.map((r) => JSON.parse(r.body_json) as Record<string, unknown>);
    } finally {
      db.close();
    }
  }

  function packVersion(version: string): string {
    const source = join(fixtureDir, `src-${version}`);
    mkdirSync(source);
    writeFileSync(join(source, "package.json"), JSON.stringify({ name: PACKAGE, version, main: "index.js" }));
    writeFileSync(join(source, "index.js"), `module.exports = ${JSON.stringify(`version ${version}`)};\n`);
    execFileSync("npm", ["pack", "--silent", "--pack-destination", fixtureDir], {
      cwd: source,
      env: { ...process.env, npm_config_offline: "true" },
      stdio: "ignore",
    });
    return join(fixtureDir, `${PACKAGE}-${version}.tgz`);
  }

  it("is recorded once per revision, named by the run's facts, reinstalled exactly on a fresh host, and never re-resolved", async () => {
    const a = await agent();
    const env = await environment({ npm: [`${PACKAGE}@^1.0.0`] });
    await t.client.beta.sessions.create({ agent: a.id, environment_id: env.id });
    const frozen = recordedResolution(env.id);
    expect(frozen).toMatchObject({ id: expect.stringMatching(/^pkgres_[0-9a-f]{32}$/), pinned: "1.0.0" });

    // A newer matching version is published, and this host loses its prepared sets (a fresh host).
    registry.publish({ name: PACKAGE, version: "1.1.0", tarball: packVersion("1.1.0") });
    rmSync(packagesRoot(), { recursive: true, force: true });
    const session = await t.client.beta.sessions.create({ agent: a.id, environment_id: env.id });
    const result = await bash(session.id, USE_PACKAGE);
    expect(textOf(result)).toContain(GREETING);
    expect(textOf(result)).not.toContain("version 1.1.0");
    expect(recordedResolution(env.id)).toEqual(frozen);
    expect(realizedFacts(session.id)).toEqual([
      expect.objectContaining({ package_resolution_id: frozen!.id }),
    ]);

    // The registry loses the pinned version: a fresh host cannot satisfy it and says so; the
    // resolution stays as recorded (1.1.0 would match the range, and is not taken).
    registry.unpublish(PACKAGE, "1.0.0");
    rmSync(packagesRoot(), { recursive: true, force: true });
    try {
      const failure = await t.client.beta.sessions
        .create({ agent: a.id, environment_id: env.id })
        .catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
      expect(failure).toMatchObject({
        status: BAD_REQUEST.status,
        message: expect.stringContaining(
          `the frozen package resolution ${frozen!.id} (${PACKAGE}@1.0.0) can no longer be installed, and is not resolved again`,
        ),
      });
      expect(JSON.stringify((failure as { error?: unknown }).error)).not.toContain(t.dataDir);
      expect(recordedResolution(env.id)).toEqual(frozen);
    } finally {
      registry.publish({ name: PACKAGE, version: "1.0.0", tarball });
    }
  });
});
