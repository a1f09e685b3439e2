// Derived container image builds, timed as a client sees them: `cold` = the first build of a recipe
// (the base image already local, its layers already in the registry; the first build on a base,
// which pushes them too, is a row of its own), from creating the environment (its resolution then frozen, as a
// preparing worker does) to `awaken_image.status` ready; `rebuild` = the same recipe built again by
// the rebuild route (the bench marks the ready build failed in the database first, a stand-in for a
// failure after the build); `reuse` = a second environment with identical inputs, from create to
// ready (no build: the digest converges). Each row also shows the build record's own time (demand or
// rebuild → settled, from `GET /v1/awaken/image_builds`). Beside them: a cold container realize of
// the base (no pool) on the same machine, same run, for the ratios.
//
// The product's worker runs `buildah bud` without `--layers` and removes its local image after the
// push, so its rebuild has no layer cache to use. The `buildah --layers` rows run the worker's own
// build context with `--layers` twice in a private storage root (first, then fully cached): what a
// layer cache could serve. Run `npm run build` first (`npm run bench:image-builds` does both).
//
// Needs root, podman, buildah, skopeo and Debian's docker-registry (as test/e2e/buildWorker.test.ts);
// everything it starts (server, build worker, registry, npm registry, images) is removed at the end.
//
//   node bench/imageBuilds.mjs [--builds N] [--realizes N]
import { execFile, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { benchArgs } from "./args.mjs";

const values = benchArgs(import.meta.url, {
  builds: { type: "string", default: "4" },
  realizes: { type: "string", default: "5" },
});
const BUILDS = Number(values.builds);
const REALIZES = Number(values.realizes);

const { openSqlite } = await import("../dist/stores/sqlite/openSqlite.js");
const { SqlEnvironmentStore } = await import("../dist/stores/sql/sqlEnvironmentStore.js");
const { SqlImageBuildStore } = await import("../dist/stores/sql/sqlImageBuildStore.js");
const { ImageBuildService } = await import("../dist/coordinator/imageBuilds/imageBuildService.js");
const { PackageResolutionRecords } = await import("../dist/coordinator/packageResolutions.js");
const { packageResolution } = await import("../dist/kernel/packageResolution.js");
const { systemClock } = await import("../dist/kernel/clock.js");
const { writeBuildContext } = await import("../dist/worker/build/buildRecipe.js");
const { ContainerTierProvider } = await import("../dist/sandbox/containerTier.js");
// Node strips the types of these TypeScript helpers itself: the bench and the tests share them.
const { buildSandboxImage, podmanMissing } = await import("../test/support/sandboxImage.ts");
const { dockerRegistryMissing, startDockerRegistry } = await import("../test/support/dockerRegistry.ts");
const { startFakeNpmRegistry } = await import("../test/support/fakeNpmRegistry.ts");
const { startServerProcess } = await import("../test/support/serverProcess.ts");

const ENTRY = fileURLToPath(new URL("../dist/cli/main.js", import.meta.url));
const API_KEY = "sk-bench-image-builds-0123456789";
const BUILD_TOKEN = "bench-build-worker-token-0123456789";
const PACKAGE = "awaken-bench-fixture";
const run = promisify(execFile);

const missing =
  podmanMissing() ??
  dockerRegistryMissing() ??
  (process.getuid?.() === 0 ? null : "root (buildah and the container tier run as root here)");
if (missing) {
  console.log(`image build bench skipped: needs ${missing}`);
  process.exit(0);
}

const loadAverage = () =>
  loadavg()
    .map((load) => load.toFixed(1))
    .join(" ");
const median = (samples) => [...samples].sort((a, b) => a - b)[Math.floor((samples.length - 1) / 2)];
const ms = (value) => (value === undefined ? "—" : value.toFixed(0));
const sleep = (n) => new Promise((resolve) => setTimeout(resolve, n));

async function timed(fn) {
  const started = performance.now();
  const value = await fn();
  return { ms: performance.now() - started, value };
}

const cleanups = [];
const root = await mkdtemp(join(tmpdir(), "bench-image-builds-"));
await chmod(root, 0o711);
cleanups.push(async () => rm(root, { recursive: true, force: true }));
const loadAtStart = loadAverage();
const rows = { first: [], cold: [], rebuild: [], reuse: [], coldRecord: [], rebuildRecord: [] };
const layers = { first: [], cached: [] };
const realize = [];
const notes = [];

try {
  // A package served by a loopback npm registry, locked as a preparing worker's npm locks it.
  const source = join(root, "pkg");
  mkdirSync(source);
  writeFileSync(join(source, "package.json"), JSON.stringify({ name: PACKAGE, version: "1.0.0" }));
  writeFileSync(join(source, "index.js"), "module.exports = 'bench';\n");
  execFileSync("npm", ["pack", "--silent", "--pack-destination", root], {
    cwd: source,
    env: { ...process.env, npm_config_offline: "true" },
    stdio: "ignore",
  });
  const tarball = join(root, `${PACKAGE}-1.0.0.tgz`);
  const npm = await startFakeNpmRegistry([{ name: PACKAGE, version: "1.0.0", tarball }]);
  cleanups.push(async () => npm.close());
  // Resolved once, as the preparing worker's npm did: the registry serves tarballs it announced.
  if (!(await fetch(`${npm.url}${PACKAGE}`)).ok) throw new Error("the loopback npm registry did not answer");
  const integrity = `sha512-${createHash("sha512").update(readFileSync(tarball)).digest("base64")}`;
  /** A lockfile of its own per build (the tarball URL differs), so no two recipes share a layer. */
  const lockfile = (tag) => ({
    name: "awaken-environment",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { dependencies: { [PACKAGE]: "1.0.0" } },
      [`node_modules/${PACKAGE}`]: {
        version: "1.0.0",
        resolved: `${npm.url}${PACKAGE}/-/${PACKAGE}-1.0.0.tgz?bench=${tag}`,
        integrity,
      },
    },
  });

  const base = await timed(async () => buildSandboxImage({ withNode: true }));
  cleanups.push(async () => base.value.remove());
  notes.push(
    `base image (host binaries, node and npm) built and imported in ${ms(base.ms)} ms, off every clock`,
  );
  const registry = await startDockerRegistry();
  cleanups.push(async () => registry.stop());

  const server = await startServerProcess({
    dataDir: join(root, "data"),
    apiKey: API_KEY,
    env: {
      AWAKEN_ALLOWED_CONTAINER_IMAGES: base.value.reference,
      AWAKEN_BUILD_WORKER_TOKEN: BUILD_TOKEN,
    },
  });
  cleanups.push(async () => {
    server.child.kill("SIGTERM");
    await server.exited;
  });
  const db = await openSqlite(join(root, "data", "awaken.db"));
  cleanups.push(async () => db.close());
  const records = new PackageResolutionRecords(
    new SqlEnvironmentStore(db.db),
    systemClock,
    new ImageBuildService(new SqlImageBuildStore(db.db), systemClock),
  );

  const worker = spawn(
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
        HOME: root,
        AWAKEN_BUILD_WORKER_TOKEN: BUILD_TOKEN,
        AWAKEN_LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let workerLog = "";
  worker.stderr.on("data", (chunk) => {
    workerLog += chunk;
  });
  cleanups.push(async () => {
    if (worker.exitCode !== null || worker.signalCode !== null) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.kill("SIGTERM");
    await exited;
  });

  const api = async (method, path, body) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { "x-api-key": API_KEY, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
  const createEnvironment = (name) =>
    api("POST", "/v1/environments", {
      name,
      config: {
        type: "cloud",
        packages: { npm: [`${PACKAGE}@1.0.0`] },
        sandbox: { tier: "container", image: base.value.reference },
      },
    });
  /** Polls the environment until its image settles; a failed build stops the bench. */
  const ready = async (environmentId) => {
    for (;;) {
      const image = (await api("GET", `/v1/environments/${environmentId}`)).awaken_image;
      if (image?.status === "ready") return image;
      if (image?.status === "failed")
        throw new Error(`the build failed: ${image.error}\n${image.log_tail}\n${workerLog}`);
      await sleep(25);
    }
  };
  /** The build record's own time: created (or rebuilt) → settled. */
  const recordMs = async (buildId, since) => {
    const listed = await api("GET", "/v1/awaken/image_builds?limit=100");
    const build = listed.data.find((b) => b.id === buildId);
    return Date.parse(build.updated_at) - (since ?? Date.parse(build.created_at));
  };

  for (let i = 0; i < BUILDS; i += 1) {
    const resolution = packageResolution({
      format: 1,
      npm: { lockfile: lockfile(`${process.pid}-${i}`) },
      pip: null,
      unfrozen: [],
    });
    // Cold: the first build of this recipe.
    const cold = await timed(async () => {
      const env = await createEnvironment(`cold-${i}`);
      await records.record({ environmentId: env.id, revision: 1 }, resolution);
      return ready(env.id);
    });
    // The first build on a base also pushes the base's layers to the registry: a row of its own.
    if (i === 0) rows.first.push(cold.ms);
    else {
      rows.cold.push(cold.ms);
      rows.coldRecord.push(await recordMs(cold.value.id));
    }

    // Rebuild: the same recipe again, through the rebuild route.
    const env = (await api("GET", "/v1/awaken/image_builds?limit=100")).data.find(
      (b) => b.id === cold.value.id,
    ).environments[0].id;
    await db.db
      .updateTable("image_builds")
      .set({
        state: "failed",
        error: "bench: marked failed to time a rebuild",
        digest: null,
        image_reference: null,
      })
      .where("id", "=", cold.value.id)
      .execute();
    await sleep(50);
    const since = Date.now();
    const rebuilt = await timed(async () => {
      await api("POST", `/v1/awaken/environments/${env}/image/rebuild`);
      return ready(env);
    });
    rows.rebuild.push(rebuilt.ms);
    rows.rebuildRecord.push(await recordMs(cold.value.id, since));

    // Reuse: identical inputs, no build.
    const reuse = await timed(async () => {
      const twin = await createEnvironment(`reuse-${i}`);
      await records.record({ environmentId: twin.id, revision: 1 }, resolution);
      return ready(twin.id);
    });
    if (reuse.value.id !== cold.value.id || reuse.value.digest !== rebuilt.value.digest)
      throw new Error("the reuse did not converge on the build's digest");
    rows.reuse.push(reuse.ms);
  }
  const last = (await api("GET", "/v1/awaken/image_builds?limit=100")).data.map((b) => b.attempts);
  notes.push(`build attempts per build (cold + rebuild): ${last.join(", ")}`);

  // What buildah's layer cache could serve: the worker's build context, `--layers`, twice.
  await layerRows(base.value.reference, lockfile);

  // A cold container realize of the base on this machine (no pool), same run.
  const provider = new ContainerTierProvider({
    workspaceRoot: join(root, "realize"),
    allowedImages: [base.value.reference],
    uidRange: { first: 245_000, last: 245_999 },
    poolSize: 0,
  });
  try {
    for (let i = 0; i < REALIZES; i += 1) {
      const id = `realize-${i}`;
      const r = await timed(() =>
        provider.realize({
          tier: "container",
          sessionId: id,
          networking: { type: "unrestricted" },
          image: base.value.reference,
        }),
      );
      realize.push(r.ms);
      await provider.destroy(id);
    }
  } finally {
    await provider.close();
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch((error) => console.error(String(error)));
}

/**
 * The worker's own build context (`writeBuildContext`) built with its own buildah flags plus
 * `--layers`, in a private storage root (so no layer lands in the host's store): once, then the same
 * context again, every step then served from the cache.
 */
async function layerRows(baseReference, lockfile) {
  const store = join(root, "layers-store");
  const runroot = join(root, "layers-run");
  const storage = ["--root", store, "--runroot", runroot, "--storage-driver", "overlay"];
  const buildah = (args) => run("buildah", [...storage, ...args], { maxBuffer: 64 * 1024 * 1024 });
  try {
    await run("skopeo", [
      "copy",
      `containers-storage:${baseReference}`,
      `containers-storage:[overlay@${store}+${runroot}]${baseReference}`,
    ]);
    for (let i = 0; i < BUILDS; i += 1) {
      const context = join(root, `layers-${i}`);
      const resolution = packageResolution({
        format: 1,
        npm: { lockfile: lockfile(`layers-${process.pid}-${i}`) },
        pip: null,
        unfrozen: [],
      });
      writeBuildContext(context, baseReference, resolution);
      const bud = (tag) =>
        buildah([
          "--runtime",
          "/usr/sbin/runc",
          "bud",
          "--layers",
          "--ulimit",
          "nofile=1024:1024",
          "--ulimit",
          "nproc=1024:1024",
          "--network",
          "host",
          "--pull=never",
          "-t",
          tag,
          "-f",
          join(context, "Containerfile"),
          context,
        ]);
      layers.first.push((await timed(() => bud(`localhost/bench-layers-${i}:a`))).ms);
      layers.cached.push((await timed(() => bud(`localhost/bench-layers-${i}:b`))).ms);
    }
  } catch (error) {
    notes.push(`buildah --layers rows skipped: ${String(error.message).split("\n")[0]}`);
  } finally {
    await buildah(["rmi", "--all", "--force"]).catch(() => {});
    await run("umount", ["-R", join(store, "overlay")]).catch(() => {});
  }
}

const header = ["step", "runs", "p50 ms", "min ms", "max ms", "× realize p50"];
const realizeP50 = realize.length > 0 ? median(realize) : undefined;
const table = [
  ["first build on the base, create → ready", rows.first],
  ["cold build, create → ready", rows.cold],
  ["  its record: demand → settled", rows.coldRecord],
  ["rebuild (same recipe), call → ready", rows.rebuild],
  ["  its record: rebuild → settled", rows.rebuildRecord],
  ["reuse (identical inputs), create → ready", rows.reuse],
  ["buildah --layers, first build", layers.first],
  ["buildah --layers, same context again", layers.cached],
  ["container realize of the base (no pool)", realize],
]
  .filter(([, samples]) => samples.length > 0)
  .map(([name, samples]) => [
    name,
    String(samples.length),
    ms(median(samples)),
    ms(Math.min(...samples)),
    ms(Math.max(...samples)),
    realizeP50 ? (median(samples) / realizeP50).toFixed(2) : "—",
  ]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i].length)));
const line = (cells) =>
  cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
console.log(
  `\nDerived image builds: ${BUILDS} recipes, npm package from a loopback registry, pushed to a loopback ` +
    `docker-registry; build worker polls every 100 ms. ${cpus().length} CPUs, load average ${loadAtStart} ` +
    `at the start and ${loadAverage()} at the end (a busy machine inflates every figure)`,
);
for (const note of notes) console.log(note);
console.log(line(header));
for (const row of table) console.log(line(row));
const ratio = (a, b) => (a.length > 0 && b.length > 0 ? (median(a) / median(b)).toFixed(1) : "—");
console.log(
  `\nRatios of p50: cold / rebuild ${ratio(rows.cold, rows.rebuild)}; cold / reuse ${ratio(rows.cold, rows.reuse)}; ` +
    `buildah --layers first / cached ${ratio(layers.first, layers.cached)}; ` +
    `product rebuild / buildah --layers cached ${ratio(rows.rebuild, layers.cached)}`,
);
