/**
 * Image builds over the real server process: a container-tier environment with an npm package gets
 * a build demand once its resolution is frozen; a build worker (its own token, plain HTTP) claims it
 * with the frozen lockfile, renews, and settles with a digest; a stale lease's settle is refused; the
 * environment object shows `awaken_image`; a second environment with the same inputs reuses the
 * digest (nothing to claim); a failed build is retried only by the explicit rebuild call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
});
