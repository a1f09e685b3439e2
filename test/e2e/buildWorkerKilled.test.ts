/**
 * A build worker killed mid-build (SIGKILL to it and the buildah it runs, while `npm ci` inside the
 * build waits on its tarball) leaves the build `building` with no digest; the next build worker,
 * started at once on the same host, removes the killed one's buildah working container (and the
 * RUN step still alive in it, its base alias and build context), takes the build only once the
 * short lease (`awaken up --image-build-lease-s 4`) lapsed, under the next epoch, builds, pushes and
 * settles. The recorded digest is the registry's manifest, the image holds the package at its
 * frozen version, and the killed worker's lease is refused over HTTP before and after.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { instanceOf } from "../../src/worker/build/builderInstance.js";
import { removeBuildLeftovers } from "../../src/worker/build/buildLeftovers.js";
import {
  type BuildWorkerFixture,
  type BuildWorkerProcess,
  FROZEN_PACKAGE,
  RUNC,
  startBuildWorkerFixture,
  type Wire,
} from "../support/buildWorkerFixture.js";

const API_KEY = "sk-buildworker-killed-key-0123456789";
const BUILD_TOKEN = "build-worker-killed-token-0123456789";
const LEASE_S = 4;

let f: BuildWorkerFixture;
const killed: number[] = [];

interface BuildRow {
  state: string;
  owner: string | null;
  epoch: number;
  lease_expires_at: number | null;
  attempts: number;
  digest: string | null;
  image_reference: string | null;
}

/** The build's row: the lease (owner, epoch, expiry) is internal, not on the wire. */
function row(buildId: string): BuildRow {
  const reader = new Database(join(f.dir, "data", "awaken.db"), { readonly: true });
  try {
    return reader
      .prepare(
        "select state, owner, epoch, lease_expires_at, attempts, digest, image_reference from image_builds where id = ?",
      )
      .get(buildId) as BuildRow;
  } finally {
    reader.close();
  }
}

function json<T>(command: string, args: string[]): T {
  const out = spawnSync(command, args, { encoding: "utf8" });
  if (out.status !== 0) throw new Error(`${command} ${args.join(" ")}: ${out.stderr}`);
  return (JSON.parse(out.stdout || "null") ?? []) as T;
}

/** Buildah's working containers named by the build worker process `pid`. */
function containersOf(pid: number): Array<{ id: string; containername: string }> {
  return json<Array<{ id: string; containername: string }>>("buildah", [
    "containers",
    "--all",
    "--json",
  ]).filter((c) => instanceOf(c.containername)?.pid === pid);
}

/** Image names (tags and aliases) made by the build worker process `pid`. */
function imagesOf(pid: number): string[] {
  return json<Array<{ names?: string[] | null }>>("buildah", ["images", "--json"])
    .flatMap((i) => i.names ?? [])
    .filter((name) => instanceOf(name.replace(/^localhost\//, ""))?.pid === pid);
}

/** Build contexts of the build worker process `pid` in the temp dir. */
function contextsOf(pid: number): string[] {
  return readdirSync(tmpdir()).filter((entry) => instanceOf(entry)?.pid === pid);
}

/** The runtime containers of RUN steps in `containerId` (buildah names their host after it). */
function runStepsOf(containerId: string): Array<{ id: string; status: string; pid: number }> {
  return json<Array<{ id: string; status: string; pid: number; bundle: string }>>(RUNC, [
    "list",
    "--format",
    "json",
  ]).filter((step) => {
    try {
      const config = JSON.parse(readFileSync(join(step.bundle, "config.json"), "utf8")) as Wire;
      return config.hostname === containerId.slice(0, 12);
    } catch {
      return false;
    }
  });
}

async function buildCall(path: string, body: unknown): Promise<{ status: number; body: Wire }> {
  const response = await fetch(`${f.server.url}/v1/awaken/build-worker${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${BUILD_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Wire };
}

async function until<T>(what: () => T | Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await what();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function skopeoInspect(reference: string): Wire {
  return json<Wire>("skopeo", ["inspect", "--tls-verify=false", `docker://${reference}`]);
}

beforeAll(async () => {
  f = await startBuildWorkerFixture({
    apiKey: API_KEY,
    buildToken: BUILD_TOKEN,
    serverArgs: ["--image-build-lease-s", String(LEASE_S)],
  });
}, 120_000);

afterAll(async () => {
  // Whatever the killed worker left, should the test have failed before its successor removed it.
  for (const pid of killed) await removeBuildLeftovers(RUNC, (instance) => instance.pid === pid);
  await f?.stop();
});

describe("a build worker killed mid-build", () => {
  it("leaves the build to the next worker once the lease lapses; nothing it made is recorded or left", async () => {
    const env = await f.environment("killed-mid-build");
    await f.records.record({ environmentId: env.id, revision: 1 }, f.resolution());
    const buildId = (await f.imageOf(env.id)).id as string;

    // Worker A reaches the RUN step: npm ci inside the build waits on the tarball we hold.
    const hold = f.npm.holdTarballs();
    const a: BuildWorkerProcess = f.startBuildWorker({ detached: true });
    const aPid = a.child.pid as number;
    await until(
      () => hold.waiting(),
      (n) => n >= 1,
    );
    expect(await f.imageOf(env.id)).toMatchObject({ status: "building", digest: null, attempts: 1 });
    const held = row(buildId);
    expect(held).toMatchObject({ state: "building", epoch: 1, digest: null });
    // The operator's lease, not the default 60 s: renewed every third, never further out than 4 s.
    expect((held.lease_expires_at as number) - Date.now()).toBeLessThanOrEqual(LEASE_S * 1000);
    const aLease = { buildId, owner: held.owner as string, epoch: held.epoch };
    const [aContainer] = containersOf(aPid);
    expect(aContainer?.containername, a.log()).toMatch(/^awaken-build-[0-9a-f]{8}-\d+-\d+-working-container/);
    expect(runStepsOf(aContainer!.id)).toEqual([expect.objectContaining({ status: "running" })]);

    // kill -9 the worker and the buildah it started (its process group): the RUN step survives.
    killed.push(aPid);
    process.kill(-aPid, "SIGKILL");
    await a.exited;
    expect(containersOf(aPid)).toHaveLength(1);
    expect(imagesOf(aPid)).not.toEqual([]);
    expect(contextsOf(aPid)).toHaveLength(1);
    expect(runStepsOf(aContainer!.id)).toEqual([expect.objectContaining({ status: "running" })]);

    // Worker B, at once on the same host: it removes A's leftovers before claiming anything.
    const b = f.startBuildWorker({ logLevel: "info" });
    const bPid = b.child.pid as number;
    const cleaned = await until(
      () => b.log(),
      (log) => /no build worker leftovers|removed what killed build workers/.test(log),
    );
    const report = cleaned
      .split("\n")
      .filter((line) => line.includes("removed what killed build workers"))
      .map((line) => JSON.parse(line) as Wire);
    expect(report, cleaned).toEqual([
      expect.objectContaining({ containers: 1, contexts: 1, images: expect.any(Number) }),
    ]);
    expect(report[0]?.images).toBeGreaterThanOrEqual(1);
    expect(cleaned).not.toContain("could not remove");
    expect(containersOf(aPid)).toEqual([]);
    expect(imagesOf(aPid)).toEqual([]);
    expect(contextsOf(aPid)).toEqual([]);
    expect(runStepsOf(aContainer!.id)).toEqual([]);
    // The base image itself stays: only A's alias of it went.
    expect(spawnSync("buildah", ["inspect", "--type", "image", f.base.reference]).status).toBe(0);

    // Until A's lease lapses, B (claiming every 100 ms) does not get the build: A's epoch holds.
    const expiry = held.lease_expires_at as number;
    while (Date.now() < expiry - 150) {
      expect(row(buildId)).toMatchObject({ state: "building", epoch: 1, owner: aLease.owner, digest: null });
      await new Promise((r) => setTimeout(r, 100));
    }
    hold.release();
    const taken = await until(
      () => row(buildId),
      (r) => r.epoch > 1,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(expiry);
    expect(taken).toMatchObject({ state: "building", epoch: 2, attempts: 2, digest: null });
    expect(taken.owner).not.toBe(aLease.owner);

    // A's lease is refused over HTTP: no renewal, no release, no digest of its own.
    const forged = `sha256:${"a".repeat(64)}`;
    const aReady = {
      kind: "ready",
      digest: forged,
      imageReference: `${f.registry.address}/awaken/environments@${forged}`,
      logTail: "",
    };
    for (const [path, body] of [
      ["/renew", aLease],
      ["/release", aLease],
      ["/settle", { ...aLease, outcome: aReady }],
    ] as const) {
      const refused = await buildCall(path, body);
      expect(refused.status, `${path} ${JSON.stringify(refused.body)}`).toBe(409);
      expect(refused.body.error.message).toMatch(/stale image build lease/);
    }

    // B builds, pushes, reads back and settles: the recorded digest is the registry's manifest.
    const image = await f.settled(env.id);
    expect(image, `${JSON.stringify(image)}\n${b.log()}`).toMatchObject({ status: "ready", attempts: 2 });
    expect(image.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(image.digest).not.toBe(forged);
    expect(image.image).toBe(`${f.registry.address}/awaken/environments@${image.digest}`);
    expect(skopeoInspect(image.image)).toMatchObject({ Digest: image.digest });
    expect(skopeoInspect(`${f.registry.address}/awaken/environments:${buildId}`)).toMatchObject({
      Digest: image.digest,
    });
    expect(f.packageJsonIn(image.image)).toMatchObject({ name: FROZEN_PACKAGE, version: "1.2.3" });

    // Once settled, A's lease is still refused and changes nothing.
    const late = await buildCall("/settle", { ...aLease, outcome: aReady });
    expect(late.status).toBe(409);
    expect(row(buildId)).toMatchObject({ state: "ready", digest: image.digest, owner: null });

    // B leaves nothing of its own behind after a build.
    expect(containersOf(bPid)).toEqual([]);
    expect(imagesOf(bPid)).toEqual([]);
    expect(contextsOf(bPid)).toEqual([]);
  }, 300_000);
});
