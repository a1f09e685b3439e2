/**
 * Sessions of a revision that derives its container image, on the all-in-one server, through the
 * official SDK over real HTTP: creating one freezes the revision's resolution (the build's input) but
 * installs nothing on the host, before and after the build is ready (the packages live in the
 * image); a revision that would also need apt, cargo, gem or go packages is refused where it is
 * written (400 naming them), and a stored one when a session of it is created; while the build is
 * pending the 409 tells the SDK not to retry on its own, so exactly one request reaches the server.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageBuildService } from "../../src/coordinator/imageBuilds/imageBuildService.js";
import { PackageResolutionRecords } from "../../src/coordinator/packageResolutions.js";
import { systemClock } from "../../src/kernel/clock.js";
import { packageResolution } from "../../src/kernel/packageResolution.js";
import { SqlEnvironmentStore } from "../../src/stores/sql/sqlEnvironmentStore.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "../support/fakeNpmRegistry.js";
import { scrapeMetrics, total } from "../support/metricsScrape.js";
import { BAD_REQUEST, expectApiError, MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

const PACKAGE = "awaken-derived-fixture";
const BASE = "localhost/awaken-derived-base:1";
const DIGEST = `sha256:${"e".repeat(64)}`;

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read by assertions only
type Wire = Record<string, any>;

let fixtureDir: string;
let registry: FakeNpmRegistry;
let t: TestServer;
let db: SqliteHandle;
let builds: ImageBuildService;
let records: PackageResolutionRecords;

beforeAll(async () => {
  fixtureDir = mkdtempSync(join(tmpdir(), "awaken-derived-fixture-"));
  const source = join(fixtureDir, "src");
  mkdirSync(source);
  writeFileSync(join(source, "package.json"), JSON.stringify({ name: PACKAGE, version: "1.0.0" }));
  writeFileSync(join(source, "index.js"), "module.exports = 'derived';\n");
  execFileSync("npm", ["pack", "--silent", "--pack-destination", fixtureDir], {
    cwd: source,
    env: { ...process.env, npm_config_offline: "true" },
    stdio: "ignore",
  });
  registry = await startFakeNpmRegistry([
    { name: PACKAGE, version: "1.0.0", tarball: join(fixtureDir, `${PACKAGE}-1.0.0.tgz`) },
  ]);
  t = await startTestServer({
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AWAKEN_ALLOWED_CONTAINER_IMAGES: BASE,
      // Only the loopback registry may be reached: a mistake fails instead of going to the network.
      npm_config_registry: registry.url,
      npm_config_fetch_retries: "0",
    },
  });
  // The server's own SQLite file: the test settles builds as a build worker would.
  db = await openSqlite(join(t.dataDir, "awaken.db"));
  builds = new ImageBuildService(new SqlImageBuildStore(db.db), systemClock);
  records = new PackageResolutionRecords(new SqlEnvironmentStore(db.db), systemClock, builds);
}, 60_000);

afterAll(async () => {
  await db?.close();
  await t?.close();
  await registry?.close();
  if (fixtureDir) rmSync(fixtureDir, { recursive: true, force: true });
});

/** Everything in the host's prepared-package cache (sets, staging directories): none expected. */
function hostPackageSets(): string[] {
  const root = join(t.dataDir, "workspaces", ".packages");
  return existsSync(root) ? readdirSync(root) : [];
}

async function derivedEnvironment(packages: Record<string, string[]>) {
  return t.client.beta.environments.create({
    name: "derived",
    config: { type: "cloud", packages, sandbox: { tier: "container", image: BASE } } as never,
  });
}

async function agent() {
  return t.client.beta.agents.create({ name: "derived", model: MODEL });
}

async function imageOf(environmentId: string): Promise<Wire> {
  return ((await t.client.beta.environments.retrieve(environmentId)) as never as Wire).awaken_image;
}

/** Settles the pending build `buildId` ready, as a build worker that pushed it would. */
async function settleReady(buildId: string): Promise<void> {
  const claimed = await builds.claim("test-build-worker");
  expect(claimed?.id).toBe(buildId);
  await builds.settle(
    { buildId, owner: "test-build-worker", epoch: claimed!.epoch },
    {
      kind: "ready",
      digest: DIGEST,
      imageReference: `127.0.0.1:5000/awaken/environments@${DIGEST}`,
      logTail: "pushed",
    },
  );
}

describe("sessions of a derived-image revision", () => {
  it("freeze the resolution for the build but prepare no npm/pip packages on the host", async () => {
    const a = await agent();
    const env = await derivedEnvironment({ npm: [`${PACKAGE}@^1.0.0`] });

    // The first session freezes the resolution (resolved on the host against the registry), which
    // demands the build; the session waits for it (409). Nothing was installed on the host.
    await expectApiError(
      t.client.beta.sessions.create({ agent: a.id, environment_id: env.id }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: [/image build imgbuild_[a-f0-9]+ is pending/] },
    );
    expect(registry.requested).toContain(PACKAGE);
    const pending = await imageOf(env.id);
    expect(pending).toMatchObject({ status: "pending", base_image: BASE });
    expect(pending.resolution_id).toMatch(/^pkgres_[a-f0-9]{32}$/);
    expect(hostPackageSets()).toEqual([]);

    // Once the build is ready the session is created, and still nothing is installed on the host.
    await settleReady(pending.id);
    const session = await t.client.beta.sessions.create({ agent: a.id, environment_id: env.id });
    expect(session.environment_id).toBe(env.id);
    expect(await imageOf(env.id)).toMatchObject({ status: "ready", resolution_id: pending.resolution_id });
    expect(hostPackageSets()).toEqual([]);
  }, 60_000);

  it("refuses apt, cargo, gem and go packages beside a derived image (400 naming them)", async () => {
    await expectApiError(
      derivedEnvironment({ npm: [`${PACKAGE}@^1.0.0`], apt: ["cowsay"], go: ["golang.org/x/tools"] }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: [/config\.packages\.apt, config\.packages\.go/, /carries only npm and pip/, /base image/],
      },
    );
    // Update: a derived revision gaining gem packages, and an image-only one gaining pip beside cargo.
    const derived = await derivedEnvironment({ pip: ["requests"] });
    await expectApiError(
      t.client.beta.environments.update(derived.id, {
        config: { type: "cloud", packages: { gem: ["rake"] } } as never,
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/config\.packages\.gem:/] },
    );
    const named = await derivedEnvironment({ cargo: ["ripgrep"] });
    expect(await imageOf(named.id)).toBeUndefined();
    await expectApiError(
      t.client.beta.environments.update(named.id, {
        config: { type: "cloud", packages: { pip: ["requests"] } } as never,
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [/config\.packages\.cargo:/] },
    );
    // Another tier is not concerned: bwrap prepares its packages on the host, as before.
    await t.client.beta.environments.create({
      name: "bwrap",
      config: { type: "cloud", packages: { npm: [PACKAGE], apt: ["cowsay"] } } as never,
    });

    // A revision stored before the rule: its sessions are refused (400) before anything is prepared.
    const stored = await derivedEnvironment({ npm: [`${PACKAGE}@^1.0.0`] });
    const row = await db.db
      .selectFrom("environment_revisions")
      .select("config_json")
      .where("environment_id", "=", stored.id)
      .where("revision", "=", 1)
      .executeTakeFirstOrThrow();
    const config = JSON.parse(row.config_json) as Wire;
    config.packages.apt = ["cowsay"];
    await db.db
      .updateTable("environment_revisions")
      .set({ config_json: JSON.stringify(config) })
      .where("environment_id", "=", stored.id)
      .where("revision", "=", 1)
      .execute();
    const requested = registry.requested.length;
    await expectApiError(
      t.client.beta.sessions.create({ agent: (await agent()).id, environment_id: stored.id }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: [`environment ${stored.id} (revision 1): config.packages.apt:`] },
    );
    expect(registry.requested.length).toBe(requested);
    expect(hostPackageSets()).toEqual([]);
  }, 60_000);

  it("a pending build's 409 reaches the official SDK at once: exactly one request, body unchanged", async () => {
    const env = await derivedEnvironment({ npm: ["left-pad@1.3.0"] });
    await records.record(
      { environmentId: env.id, revision: 1 },
      packageResolution({
        format: 1,
        npm: {
          lockfile: {
            lockfileVersion: 3,
            packages: {
              "": { dependencies: { "left-pad": "1.3.0" } },
              "node_modules/left-pad": {
                version: "1.3.0",
                resolved: "http://127.0.0.1:9/left-pad/-/left-pad-1.3.0.tgz",
                integrity: "sha512-AAAA",
              },
            },
          },
        },
        pip: null,
        unfrozen: [],
      }),
    );
    const pending = await imageOf(env.id);
    expect(pending).toMatchObject({ status: "pending" });
    const a = await agent();

    // The SDK's defaults: two retries of a 409 unless the server says otherwise.
    const client = new Anthropic({ baseURL: t.server.url, apiKey: TEST_API_KEY });
    const counted = { route: "/v1/sessions", method: "POST", status: "409" };
    const before = total((await scrapeMetrics(t.server.url)).samples, "awaken_http_requests_total", counted);
    const refused = await expectApiError(
      client.beta.sessions.create({ agent: a.id, environment_id: env.id }),
      Anthropic.ConflictError,
      { status: 409, type: "conflict_error", message: [`image build ${pending.id} is pending`] },
    );
    expect(refused.headers?.get("x-should-retry")).toBe("false");
    expect((refused.error as Wire).error.details).toEqual({
      error_code: "image_build_not_ready",
      image_build: { id: pending.id, status: "pending" },
    });
    // Counted when each answer's socket is done: give the count a moment to settle, then compare.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = total((await scrapeMetrics(t.server.url)).samples, "awaken_http_requests_total", counted);
    expect(after - before).toBe(1);
  }, 60_000);
});
