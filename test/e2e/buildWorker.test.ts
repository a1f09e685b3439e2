/**
 * `awaken build-worker` end to end: a container-tier environment with an npm package, its
 * resolution frozen (a real lockfile against a loopback npm registry), a build-worker child process
 * (its own token, no database) builds the image with buildah, `npm ci` inside the build, pushes it
 * to Debian's docker-registry on loopback and reports the digest read back; the environment shows
 * it ready, and the image pulled by that digest holds the package at the frozen version. A second
 * environment with the same inputs reuses the digest without a second build. With the registry down,
 * a build is handed back (pending), not failed, and finishes once the registry is back.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageBuildService } from "../../src/coordinator/imageBuilds/imageBuildService.js";
import { PackageResolutionRecords } from "../../src/coordinator/packageResolutions.js";
import { systemClock } from "../../src/kernel/clock.js";
import { packageResolution } from "../../src/kernel/packageResolution.js";
import { SqlEnvironmentStore } from "../../src/stores/sql/sqlEnvironmentStore.js";
import { SqlImageBuildStore } from "../../src/stores/sql/sqlImageBuildStore.js";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";
import {
  dockerRegistryMissing,
  type LoopbackRegistry,
  startDockerRegistry,
} from "../support/dockerRegistry.js";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "../support/fakeNpmRegistry.js";
import { buildSandboxImage, podmanMissing, type SandboxImage } from "../support/sandboxImage.js";
import { isEndTurnIdle, MODEL, textOf, userMessage, waitForHistory } from "../support/sdkHelpers.js";
import { type ServerProcess, startServerProcess } from "../support/serverProcess.js";

const ENTRY = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const API_KEY = "sk-buildworker-test-key-0123456789";
const BUILD_TOKEN = "build-worker-e2e-token-0123456789";
const PACKAGE = "awaken-frozen-fixture";
const RUNC = "/usr/sbin/runc";

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read by assertions only
type Wire = Record<string, any>;

let dir: string;
let base: SandboxImage;
let npm: FakeNpmRegistry;
let registry: LoopbackRegistry;
let server: ServerProcess;
let db: SqliteHandle;
let records: PackageResolutionRecords;
let lockfile: Wire;
const workers: ChildProcess[] = [];

function startBuildWorker(): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      ENTRY,
      "build-worker",
      "--coordinator-url",
      server.url,
      "--registry",
      registry.address,
      "--registry-tls-verify",
      "false",
      "--poll-ms",
      "100",
    ],
    {
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        AWAKEN_BUILD_WORKER_TOKEN: BUILD_TOKEN,
        AWAKEN_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let err = "";
  child.stderr?.on("data", (c) => {
    err += c;
  });
  (child as ChildProcess & { log: () => string }).log = () => err;
  workers.push(child);
  return child;
}

async function environment(name: string) {
  return server.client.beta.environments.create({
    name,
    config: {
      type: "cloud",
      packages: { npm: [`${PACKAGE}@1.2.3`] },
      sandbox: { tier: "container", image: base.reference },
    } as never,
  });
}

async function imageOf(id: string): Promise<Wire> {
  return ((await server.client.beta.environments.retrieve(id)) as never as Wire).awaken_image;
}

/** Internal facts are not on the wire: read them from the server's database. */
function internalFacts(sessionId: string, type: string): Wire[] {
  const reader = new Database(join(dir, "data", "awaken.db"), { readonly: true });
  try {
    const rows = reader
      .prepare("select body_json from events where session_id = ? and type = ? order by seq")
      .all(sessionId, type) as Array<{ body_json: string }>;
    return rows.map((r) => JSON.parse(r.body_json) as Wire);
  } finally {
    reader.close();
  }
}

/** Runs one bash command in a new session of `environmentId` and answers the tool's output. */
async function bashInSession(
  environmentId: string,
  command: string,
): Promise<{ sessionId: string; text: string }> {
  const agent = await server.client.beta.agents.create({
    name: "hands",
    model: MODEL,
    tools: [{ type: "agent_toolset_20260401" }] as never,
  });
  const session = await server.client.beta.sessions.create({
    agent: agent.id,
    environment_id: environmentId,
  });
  await server.client.beta.sessions.events.send(session.id, {
    events: [userMessage(`call bash ${JSON.stringify({ command })}`)],
  });
  const events = await waitForHistory(server.client, session.id, (h) => h.some(isEndTurnIdle), 120_000);
  const result = events.filter((e) => e.type === "agent.tool_result").at(-1);
  return { sessionId: session.id, text: textOf(result) };
}

/** Waits until the build settles (no timed assertion: the test's own timeout bounds it). */
async function settled(id: string): Promise<Wire> {
  for (;;) {
    const image = await imageOf(id);
    if (image.status === "ready" || image.status === "failed") return image;
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  const missing = podmanMissing() ?? dockerRegistryMissing();
  if (missing) throw new Error(`the build worker test needs: ${missing}`);
  dir = mkdtempSync(join(tmpdir(), "awaken-buildworker-e2e-"));
  const source = join(dir, "pkg");
  mkdirSync(source);
  writeFileSync(
    join(source, "package.json"),
    JSON.stringify({ name: PACKAGE, version: "1.2.3", main: "index.js" }),
  );
  writeFileSync(join(source, "index.js"), "module.exports = 'frozen';\n");
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
    cwd: source,
    env: { ...process.env, npm_config_offline: "true" },
    stdio: "ignore",
  });
  const tarball = join(dir, `${PACKAGE}-1.2.3.tgz`);
  npm = await startFakeNpmRegistry([{ name: PACKAGE, version: "1.2.3", tarball }]);
  // Resolve it once, as the preparing worker's npm did: the registry serves tarballs it announced.
  expect((await fetch(`${npm.url}${PACKAGE}`)).ok).toBe(true);
  const bytes = readFileSync(tarball);
  lockfile = {
    name: "awaken-environment",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { dependencies: { [PACKAGE]: "1.2.3" } },
      [`node_modules/${PACKAGE}`]: {
        version: "1.2.3",
        resolved: `${npm.url}${PACKAGE}/-/${PACKAGE}-1.2.3.tgz`,
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
      },
    },
  };
  base = buildSandboxImage({ withNode: true });
  registry = await startDockerRegistry();
  server = await startServerProcess({
    dataDir: join(dir, "data"),
    apiKey: API_KEY,
    env: {
      AWAKEN_ALLOWED_CONTAINER_IMAGES: base.reference,
      AWAKEN_BUILD_WORKER_TOKEN: BUILD_TOKEN,
      // The in-process workers pull the derived image by digest from the loopback registry.
      AWAKEN_CONTAINER_PULL: "missing",
      AWAKEN_CONTAINER_TLS_VERIFY: "false",
    },
  });
  db = await openSqlite(join(dir, "data", "awaken.db"));
  records = new PackageResolutionRecords(
    new SqlEnvironmentStore(db.db),
    systemClock,
    new ImageBuildService(new SqlImageBuildStore(db.db), systemClock),
  );
}, 120_000);

afterAll(async () => {
  for (const worker of workers) {
    if (worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      worker.kill("SIGTERM");
      await exited;
    }
  }
  await db?.close();
  if (server) {
    server.child.kill("SIGTERM");
    await server.exited;
  }
  await registry?.stop();
  await npm?.close();
  base?.remove();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("awaken build-worker", () => {
  it("builds the frozen resolution into an image, pushes it, and every equal environment reuses the digest", async () => {
    const env = await environment("built");
    const resolution = packageResolution({
      format: 1,
      npm: { lockfile: lockfile as never },
      pip: null,
      unfrozen: [],
    });
    await records.record({ environmentId: env.id, revision: 1 }, resolution);
    expect(await imageOf(env.id)).toMatchObject({ status: "pending" });

    const worker = startBuildWorker();
    const image = await settled(env.id);
    expect(
      image,
      `${JSON.stringify(image)}\n${(worker as ChildProcess & { log: () => string }).log()}`,
    ).toMatchObject({
      status: "ready",
    });
    expect(image.digest).toMatch(/^sha256:[a-f0-9]{64}$/);
    expect(image.image).toBe(`${registry.address}/awaken/environments@${image.digest}`);
    expect(JSON.stringify(image)).not.toContain(BUILD_TOKEN);

    // The image pulled by that digest holds the package at the frozen version.
    const pulled = spawnSync("podman", ["pull", "--tls-verify=false", image.image], { encoding: "utf8" });
    expect(pulled.status, pulled.stderr).toBe(0);
    try {
      const run = spawnSync(
        "podman",
        [
          "--runtime",
          RUNC,
          "run",
          "--rm",
          "--network",
          "none",
          "--ulimit",
          "nofile=1024:1024",
          "--ulimit",
          "nproc=1024:1024",
          image.image,
          "cat",
          `/opt/awaken/packages/node_modules/${PACKAGE}/package.json`,
        ],
        { encoding: "utf8" },
      );
      expect(run.status, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ name: PACKAGE, version: "1.2.3" });
    } finally {
      spawnSync("podman", ["rmi", "--force", image.image]);
    }

    // A session of the revision runs the built image (pulled by digest): the package is there at
    // the frozen version, and the sandbox's fact names the digest it ran.
    try {
      const { sessionId, text } = await bashInSession(
        env.id,
        `cat /opt/awaken/packages/node_modules/${PACKAGE}/package.json; echo; ` +
          `node -e 'console.log("node:" + require("${PACKAGE}/package.json").version)'`,
      );
      expect(text, text).not.toContain("[stderr]");
      expect(JSON.parse(text.split("\n")[0] ?? "")).toMatchObject({ name: PACKAGE, version: "1.2.3" });
      expect(text).toContain("node:1.2.3");
      expect(internalFacts(sessionId, "awaken.sandbox_realized")).toEqual([
        expect.objectContaining({ tier: "container", image: image.image, image_digest: image.digest }),
      ]);
      // The image carries the packages: neither session creation nor the run installed them here.
      const hostSets = join(dir, "data", "workspaces", ".packages");
      expect(existsSync(hostSets) ? readdirSync(hostSets) : []).toEqual([]);
    } finally {
      spawnSync("podman", ["rmi", "--force", image.image]);
    }

    // Same base, same frozen resolution: the same build, ready at once, one attempt in all.
    const twin = await environment("twin");
    await records.record({ environmentId: twin.id, revision: 1 }, resolution);
    expect(await imageOf(twin.id)).toMatchObject({
      id: image.id,
      status: "ready",
      digest: image.digest,
      attempts: 1,
    });
  }, 300_000);

  it("with the registry down the build waits (handed back, pending) and completes once it is back", async () => {
    const port = registry.port;
    await registry.stop();
    const env = await environment("registry-down");
    const other = { ...lockfile, name: "another-lockfile" };
    await records.record(
      { environmentId: env.id, revision: 1 },
      packageResolution({ format: 1, npm: { lockfile: other as never }, pip: null, unfrozen: [] }),
    );
    // The worker of the first test claims it, builds, cannot push, hands it back: never failed.
    for (;;) {
      const image = await imageOf(env.id);
      expect(image.status).not.toBe("failed");
      if (image.status === "pending" && image.attempts >= 1) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    registry = await startDockerRegistry({ port });
    const image = await settled(env.id);
    expect(image, JSON.stringify(image)).toMatchObject({ status: "ready" });
    expect(image.attempts).toBeGreaterThanOrEqual(2);
  }, 300_000);
});
