/**
 * `awaken build-worker` end to end: a container-tier environment with an npm package, its
 * resolution frozen (a real lockfile against a loopback npm registry), a build-worker child process
 * (its own token, no database) builds the image with buildah, `npm ci` inside the build, pushes it
 * to Debian's docker-registry on loopback and reports the digest read back; the environment shows
 * it ready, and the image pulled by that digest holds the package at the frozen version. A second
 * environment with the same inputs reuses the digest without a second build. With the registry down,
 * a build is handed back (pending), not failed, and finishes once the registry is back.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BuildWorkerFixture,
  FROZEN_PACKAGE as PACKAGE,
  startBuildWorkerFixture,
} from "../support/buildWorkerFixture.js";
import { startDockerRegistry } from "../support/dockerRegistry.js";

const API_KEY = "sk-buildworker-test-key-0123456789";
const BUILD_TOKEN = "build-worker-e2e-token-0123456789";

let f: BuildWorkerFixture;

beforeAll(async () => {
  f = await startBuildWorkerFixture({ apiKey: API_KEY, buildToken: BUILD_TOKEN });
}, 120_000);

afterAll(async () => {
  await f?.stop();
});

describe("awaken build-worker", () => {
  it("builds the frozen resolution into an image, pushes it, and every equal environment reuses the digest", async () => {
    const env = await f.environment("built");
    const resolution = f.resolution();
    await f.records.record({ environmentId: env.id, revision: 1 }, resolution);
    expect(await f.imageOf(env.id)).toMatchObject({ status: "pending" });

    const worker = f.startBuildWorker();
    const image = await f.settled(env.id);
    expect(image, `${JSON.stringify(image)}\n${worker.log()}`).toMatchObject({
      status: "ready",
    });
    expect(image.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(image.image).toBe(`${f.registry.address}/awaken/environments@${image.digest}`);
    expect(JSON.stringify(image)).not.toContain(BUILD_TOKEN);

    // The image pulled by that digest holds the package at the frozen version.
    expect(f.packageJsonIn(image.image)).toMatchObject({ name: PACKAGE, version: "1.2.3" });

    // A session of the revision runs the built image (pulled by digest): the package is there at
    // the frozen version, and the sandbox's fact names the digest it ran.
    try {
      const { sessionId, text } = await f.bashInSession(
        env.id,
        `cat /opt/awaken/packages/node_modules/${PACKAGE}/package.json; echo; ` +
          `node -e 'console.log("node:" + require("${PACKAGE}/package.json").version)'`,
      );
      expect(text, text).not.toContain("[stderr]");
      expect(JSON.parse(text.split("\n")[0] ?? "")).toMatchObject({ name: PACKAGE, version: "1.2.3" });
      expect(text).toContain("node:1.2.3");
      expect(f.internalFacts(sessionId, "awaken.sandbox_realized")).toEqual([
        expect.objectContaining({ tier: "container", image: image.image, image_digest: image.digest }),
      ]);
      // The image carries the packages: neither session creation nor the run installed them here.
      const hostSets = join(f.dir, "data", "workspaces", ".packages");
      expect(existsSync(hostSets) ? readdirSync(hostSets) : []).toEqual([]);
    } finally {
      spawnSync("podman", ["rmi", "--force", image.image]);
    }

    // Same base, same frozen resolution: the same build, ready at once, one attempt in all.
    const twin = await f.environment("twin");
    await f.records.record({ environmentId: twin.id, revision: 1 }, resolution);
    expect(await f.imageOf(twin.id)).toMatchObject({
      id: image.id,
      status: "ready",
      digest: image.digest,
      attempts: 1,
    });
  }, 300_000);

  it("with the registry down the build waits (handed back, pending) and completes once it is back", async () => {
    const port = f.registry.port;
    await f.registry.stop();
    const env = await f.environment("registry-down");
    await f.records.record({ environmentId: env.id, revision: 1 }, f.resolution("another-lockfile"));
    // The worker of the first test claims it, builds, cannot push, hands it back: never failed.
    for (;;) {
      const image = await f.imageOf(env.id);
      expect(image.status).not.toBe("failed");
      if (image.status === "pending" && image.attempts >= 1) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    f.registry = await startDockerRegistry({ port });
    const image = await f.settled(env.id);
    expect(image, JSON.stringify(image)).toMatchObject({ status: "ready" });
    expect(image.attempts).toBeGreaterThanOrEqual(2);
  }, 300_000);
});
