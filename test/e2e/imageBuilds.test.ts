/**
 * Image builds over the real server process: a container-tier environment with an npm package gets
 * a build demand once its resolution is frozen; a build worker (its own token, plain HTTP) claims it
 * with the frozen lockfile, renews, and settles with a digest; a stale lease's settle is refused; the
 * environment object shows `awaken_image`; a second environment with the same inputs reuses the
 * digest (nothing to claim); a failed build is retried only by the explicit rebuild call.
 * `GET /v1/awaken/image_builds` lists a workspace's builds with its own environments only, even for a
 * build another workspace shares by identical inputs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageBuildService } from "../../src/coordinator/imageBuilds/imageBuildService.js";
import { PackageResolutionRecords } from "../../src/coordinator/packageResolutions.js";
import { systemClock } from "../../src/kernel/clock.js";
import { type PackageResolution, packageResolution } from "../../src/kernel/packageResolution.js";
import { SqlEnvironmentStore } from "../../src/stores/sql/sqlEnvironmentStore.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";
import { MODEL } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const API_KEY = "sk-imagebuilds-test-key-0123456789";
const BUILD_TOKEN = "build-worker-token-0123456789";
const BASE = "localhost/awaken-build-base:1";
const DIGEST = `sha256:${"d".repeat(64)}`;

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read by assertions only
type Wire = Record<string, any>;

let dir: string;
let server: ServerProcess;
let db: SqliteHandle;
let records: PackageResolutionRecords;

function lockedResolution(version: string): PackageResolution {
  return packageResolution({
    format: 1,
    npm: {
      lockfile: {
        lockfileVersion: 3,
        packages: {
          "": { dependencies: { "left-pad": version } },
          "node_modules/left-pad": {
            version,
            resolved: `http://127.0.0.1:9/left-pad/-/left-pad-${version}.tgz`,
            integrity: "sha512-AAAA",
          },
        },
      },
    },
    pip: null,
    unfrozen: [],
  });
}

async function buildCall(path: string, body: unknown, token = BUILD_TOKEN) {
  const response = await fetch(`${server.url}/v1/awaken/build-worker${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Wire };
}

async function environmentWithPackage(name: string) {
  return server.client.beta.environments.create({
    name,
    config: {
      type: "cloud",
      packages: { npm: ["left-pad@1.3.0"] },
      sandbox: { tier: "container", image: BASE },
    } as never,
  });
}

/** Creating a session of `environmentId`: the refusal's status and body, or the session's id. */
async function startSession(environmentId: string): Promise<{ status: number; body: Wire }> {
  const agent = await server.client.beta.agents.create({ name: "built", model: MODEL });
  const response = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "x-api-key": API_KEY, "content-type": "application/json" },
    body: JSON.stringify({ agent: agent.id, environment_id: environmentId }),
  });
  return { status: response.status, body: (await response.json()) as Wire };
}

async function imageOf(client: Anthropic, environmentId: string): Promise<Wire> {
  return ((await client.beta.environments.retrieve(environmentId)) as never as Wire).awaken_image;
}

async function sessionCount(): Promise<number> {
  return (await server.client.beta.sessions.list()).data.length;
}

/** What a worker preparing the revision does: freeze (record) its resolution. */
async function freeze(environmentId: string, resolution: PackageResolution) {
  return records.record({ environmentId, revision: 1 }, resolution);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "awaken-imagebuilds-e2e-"));
  server = await startServerProcess({
    dataDir: join(dir, "data"),
    apiKey: API_KEY,
    env: { AWAKEN_ALLOWED_CONTAINER_IMAGES: BASE, AWAKEN_BUILD_WORKER_TOKEN: BUILD_TOKEN },
  });
  // The same SQLite file the server uses: the resolution is recorded as a preparing worker would.
  db = await openSqlite(join(dir, "data", "awaken.db"));
  const environments = new SqlEnvironmentStore(db.db);
  records = new PackageResolutionRecords(
    environments,
    systemClock,
    new ImageBuildService(new SqlImageBuildStore(db.db), systemClock),
  );
}, 30_000);

afterAll(async () => {
  await db?.close();
  server?.child.kill("SIGTERM");
  await server?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe("image builds", () => {
  it("demand → claim with the frozen lockfile → settle with a digest; reuse; fence; token", async () => {
    const env = await environmentWithPackage("derived");
    expect((await server.client.beta.environments.retrieve(env.id)) as never).not.toHaveProperty(
      "awaken_image",
    );
    const resolution = await freeze(env.id, lockedResolution("1.3.0"));

    const pending = (await server.client.beta.environments.retrieve(env.id)) as never as Wire;
    expect(pending.awaken_image).toMatchObject({ status: "pending", digest: null, base_image: BASE });
    // A session never runs another image than its revision's build: refused until it is ready.
    const before = await sessionCount();
    const refused = await startSession(env.id);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.error.message).toContain(`image build ${pending.awaken_image.id} is pending`);
    expect(refused.body.error.details).toMatchObject({
      error_code: "image_build_not_ready",
      image_build: { id: pending.awaken_image.id, status: "pending" },
    });
    expect(await sessionCount()).toBe(before);

    expect((await buildCall("/claim", { owner: "bw-1" }, "not-the-build-token-000000")).status).toBe(401);
    const claimed = await buildCall("/claim", { owner: "bw-1" });
    expect(claimed.status).toBe(200);
    const job = claimed.body.job;
    expect(job).toMatchObject({ baseImage: BASE, resolutionId: resolution.id, epoch: 1 });
    expect(job.resolution.npm.lockfile.packages["node_modules/left-pad"].version).toBe("1.3.0");
    expect((await buildCall("/claim", { owner: "bw-2" })).body.job).toBeNull();

    const lease = { buildId: job.buildId, owner: "bw-1", epoch: job.epoch };
    expect((await buildCall("/renew", lease)).body).toMatchObject({ state: "building", epoch: 1 });
    expect((await startSession(env.id)).body.error.message).toContain("is building");
    const ready = {
      kind: "ready",
      digest: DIGEST,
      imageReference: `127.0.0.1:5000/awaken/env@${DIGEST}`,
      logTail: "pushed",
    };
    // A stale epoch (or another owner) is fenced out; nothing is recorded.
    const stale = await buildCall("/settle", { ...lease, epoch: 7, outcome: ready });
    expect(stale.status).toBe(409);
    expect(stale.body.error.message).toMatch(/stale image build lease/);
    // A reference that is not pinned to the reported digest is refused.
    const unpinned = await buildCall("/settle", { ...lease, outcome: { ...ready, imageReference: "x/y:1" } });
    expect(unpinned.status).toBe(400);
    expect((await buildCall("/settle", { ...lease, outcome: ready })).body).toMatchObject({ state: "ready" });

    const done = (await server.client.beta.environments.retrieve(env.id)) as never as Wire;
    expect(done.awaken_image).toMatchObject({ status: "ready", digest: DIGEST, image: ready.imageReference });

    // Same base, same frozen resolution: the same build, already ready; nothing to claim.
    const twin = await environmentWithPackage("twin");
    await freeze(twin.id, lockedResolution("1.3.0"));
    const reused = (await server.client.beta.environments.retrieve(twin.id)) as never as Wire;
    expect(reused.awaken_image).toMatchObject({ id: done.awaken_image.id, status: "ready", digest: DIGEST });
    expect((await buildCall("/claim", { owner: "bw-2" })).body.job).toBeNull();
  });

  it("a failed build stays failed until the explicit rebuild call", async () => {
    const env = await environmentWithPackage("failing");
    await freeze(env.id, lockedResolution("1.2.0"));
    const { job } = (await buildCall("/claim", { owner: "bw-3" })).body;
    const lease = { buildId: job.buildId, owner: "bw-3", epoch: job.epoch };
    const failed = { kind: "failed", error: "npm ci exited 1", logTail: "npm ERR! 404 left-pad" };
    expect((await buildCall("/settle", { ...lease, outcome: failed })).body).toMatchObject({
      state: "failed",
    });
    const shown = (await server.client.beta.environments.retrieve(env.id)) as never as Wire;
    expect(shown.awaken_image).toMatchObject({ status: "failed", error: "npm ci exited 1" });
    expect(shown.awaken_image.log_tail).toContain("npm ERR! 404");
    const refused = await startSession(env.id);
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain("failed (npm ci exited 1)");
    expect((await buildCall("/claim", { owner: "bw-4" })).body.job).toBeNull();

    const rebuild = async () =>
      fetch(`${server.url}/v1/awaken/environments/${env.id}/image/rebuild`, {
        method: "POST",
        headers: { "x-api-key": API_KEY },
      });
    const retried = await rebuild();
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as Wire).awaken_image).toMatchObject({ status: "pending" });
    expect((await rebuild()).status).toBe(409);
    expect((await buildCall("/claim", { owner: "bw-4" })).body.job).toMatchObject({
      buildId: job.buildId,
      epoch: 2,
    });
  });
  // Last: it leaves pending builds, which the claims of the tests above must not see.
  it("lists each workspace's builds with its own environments only, a shared build included", async () => {
    const get = async (path: string, key = API_KEY) => {
      const response = await fetch(`${server.url}${path}`, { headers: { "x-api-key": key } });
      return { status: response.status, body: (await response.json()) as Wire };
    };
    const minted = await fetch(`${server.url}/v1/awaken/api_keys`, {
      method: "POST",
      headers: { "x-api-key": API_KEY, "content-type": "application/json" },
      body: JSON.stringify({ role: "admin", workspace_id: "wrkspc_builds-b" }),
    });
    const otherKey = ((await minted.json()) as Wire).key as string;
    const other = new Anthropic({ apiKey: otherKey, baseURL: server.url, maxRetries: 0 });

    const ours = await environmentWithPackage("listed");
    await freeze(ours.id, lockedResolution("1.0.1"));
    // The other workspace's environment has identical inputs: one build, shared.
    const theirs = await other.beta.environments.create({
      name: "theirs",
      config: {
        type: "cloud",
        packages: { npm: ["left-pad@1.3.0"] },
        sandbox: { tier: "container", image: BASE },
      } as never,
    });
    await freeze(theirs.id, lockedResolution("1.0.1"));
    const theirsOnly = await other.beta.environments.create({
      name: "theirs-only",
      config: {
        type: "cloud",
        packages: { npm: ["left-pad@1.3.0"] },
        sandbox: { tier: "container", image: BASE },
      } as never,
    });
    await freeze(theirsOnly.id, lockedResolution("1.0.2"));

    const mine = await get("/v1/awaken/image_builds?limit=100");
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    const shared = mine.body.data.find((b: Wire) => b.environments.some((e: Wire) => e.id === ours.id));
    expect(shared).toMatchObject({
      type: "image_build",
      status: "pending",
      base_image: BASE,
      recipe_digest: expect.stringMatching(/^sha256:[a-f0-9]{64}$/),
      digest: null,
      attempts: 0,
      epoch: 0,
      environments: [{ id: ours.id, name: "listed", revisions: [1], current: true }],
    });
    expect(shared.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(JSON.stringify(mine.body)).not.toContain(theirs.id);
    expect(JSON.stringify(mine.body)).not.toContain(theirsOnly.id);

    const seen = await get("/v1/awaken/image_builds?limit=100", otherKey);
    expect(seen.body.data.map((b: Wire) => b.id).sort()).toEqual(
      [shared.id, (await imageOf(other, theirsOnly.id)).id].sort(),
    );
    const sharedThere = seen.body.data.find((b: Wire) => b.id === shared.id);
    expect(sharedThere.environments).toEqual([
      { id: theirs.id, name: "theirs", revisions: [1], current: true },
    ]);
    expect(JSON.stringify(seen.body)).not.toContain(ours.id);

    // Paged like the other lists; hostile parameters are client errors.
    const first = await get("/v1/awaken/image_builds?limit=1");
    expect(first.body.data).toHaveLength(1);
    expect(first.body.next_page).toEqual(expect.any(String));
    const second = await get(`/v1/awaken/image_builds?limit=1&page=${first.body.next_page}`);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect((await get("/v1/awaken/image_builds?limit=abc")).status).toBe(400);
    expect((await get("/v1/awaken/image_builds?workspace_id=wrkspc_builds-b")).status).toBe(400);
    expect((await get("/v1/awaken/image_builds?page=bm90LWEtY3Vyc29y")).status).toBe(400);
  });
});
