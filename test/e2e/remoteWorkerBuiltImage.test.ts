/**
 * A derived image built once runs on another host: the coordinator (`awaken up --workers 0`) and a
 * build worker build and push it as in buildWorker.test.ts; a remote `awaken worker` with an image
 * store of its own (`--container-storage`, empty at its start: another host's podman) runs a
 * session of the environment. Its store pulls exactly the recorded digest from the registry, the
 * session's `awaken.sandbox_realized` fact names that digest, the bash tool reads the package at its
 * frozen version, and the coordinator host's default store holds neither that image nor a
 * container of that worker.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type BuildWorkerFixture,
  FROZEN_PACKAGE,
  startBuildWorkerFixture,
} from "../support/buildWorkerFixture.js";
import { type PodmanStore, podmanStore } from "../support/podmanStore.js";
import { spawnWorker, type WorkerProcess } from "../support/workerProcess.js";

const API_KEY = "sk-crosshost-test-key-0123456789";
const BUILD_TOKEN = "build-worker-crosshost-token-0123";
const WORKER_TOKEN = "remote-worker-crosshost-token-01";
const PACKAGE_JSON = `/opt/awaken/packages/node_modules/${FROZEN_PACKAGE}/package.json`;

let f: BuildWorkerFixture;
/** The remote worker's host: its store and workspaces (short: podman bounds <store>/run to 50 bytes). */
let host: string;
let store: PodmanStore;
let worker: WorkerProcess | undefined;

/** `podman ps` names of containers with `label` in a store (`args`: none for the default store). */
function containersLabelled(args: string[], label: string): string[] {
  const result = spawnSync(
    "podman",
    [...args, "ps", "--all", "--filter", `label=${label}`, "--format", "{{.Names}}"],
    { encoding: "utf8" },
  );
  return result.stdout.split("\n").filter(Boolean);
}

/** `repository@digest` of every image in a store. */
function imageDigests(args: string[]): string[] {
  const result = spawnSync(
    "podman",
    [...args, "images", "--digests", "--format", "{{.Repository}}@{{.Digest}}"],
    { encoding: "utf8" },
  );
  return result.stdout.split("\n").filter(Boolean);
}

beforeAll(async () => {
  host = mkdtempSync(join(tmpdir(), "xh-"));
  store = podmanStore(join(host, "store"));
  // No in-process workers: the session can only run on the remote worker below.
  f = await startBuildWorkerFixture({
    apiKey: API_KEY,
    buildToken: BUILD_TOKEN,
    serverArgs: ["--workers", "0"],
    serverEnv: { AWAKEN_WORKER_TOKEN: WORKER_TOKEN },
  });
}, 120_000);

afterAll(async () => {
  // The worker first: its drain closes its containers and warm pool before the store goes.
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
    worker.child.kill("SIGTERM");
    await worker.exited;
  }
  store?.remove();
  if (host) rmSync(host, { recursive: true, force: true });
  await f?.stop();
});

describe("a remote worker with its own image store", () => {
  it("pulls the recorded digest into its store and runs the session's bash tool in it", async () => {
    const environment = await f.environment("crosshost");
    await f.records.record({ environmentId: environment.id, revision: 1 }, f.resolution());
    const builder = f.startBuildWorker();
    const image = await f.settled(environment.id);
    expect(image, `${JSON.stringify(image)}\n${builder.log()}`).toMatchObject({ status: "ready" });
    const pinned = `${f.registry.address}/awaken/environments@${image.digest}`;
    expect(image.image).toBe(pinned);

    // Another host: a worker process whose store starts empty (it does not exist yet). Held from
    // its spawn, so a slow start on a loaded machine is still cleaned up.
    expect(existsSync(store.dir)).toBe(false);
    const remote = spawnWorker(
      [
        ...["--coordinator-url", f.server.url],
        ...["--container-storage", store.dir],
        ...["--workspace-dir", join(host, "workspaces")],
      ],
      {
        AWAKEN_WORKER_TOKEN: WORKER_TOKEN,
        AWAKEN_ALLOWED_CONTAINER_IMAGES: f.base.reference,
        AWAKEN_CONTAINER_PULL: "missing",
        AWAKEN_CONTAINER_TLS_VERIFY: "false",
      },
    );
    worker = remote;
    while (!/is running/.test(remote.stdout())) {
      if (remote.child.exitCode !== null) throw new Error(`the worker exited:\n${remote.stderr()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(imageDigests(store.args)).toEqual([]);

    const { sessionId, text } = await f.bashInSession(
      environment.id,
      `cat ${PACKAGE_JSON}; echo; ` +
        `node -e 'console.log("node:" + require("${FROZEN_PACKAGE}/package.json").version)'`,
    );
    expect(text, `${text}\n${remote.stderr()}`).not.toContain("[stderr]");
    expect(text.split("\n")[0], `${text}\n${remote.stderr()}`).toMatch(/^\{/);
    expect(JSON.parse(text.split("\n")[0] ?? "")).toMatchObject({ name: FROZEN_PACKAGE, version: "1.2.3" });
    expect(text).toContain("node:1.2.3");
    expect(f.internalFacts(sessionId, "awaken.sandbox_realized")).toEqual([
      expect.objectContaining({ tier: "container", image: pinned, image_digest: image.digest }),
    ]);

    // The worker's store pulled exactly that digest, and only it.
    expect(imageDigests(store.args)).toEqual([pinned]);
    const workerLabel = `io.awaken.sandbox=${remote.child.pid}`;
    expect(containersLabelled(store.args, workerLabel).length).toBeGreaterThan(0);
    // The coordinator host's default store was not the worker's.
    expect(containersLabelled([], workerLabel)).toEqual([]);
    expect(imageDigests([]).filter((entry) => entry.endsWith(`@${image.digest}`))).toEqual([]);
  }, 300_000);
});
