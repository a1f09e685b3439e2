/**
 * The frozen package resolution, with the real npm against a loopback registry: a revision's npm
 * list is resolved once (a lockfile, recorded first-writer-wins), and every host installs exactly
 * that, even after the registry published a newer matching version. A pinned version the registry
 * lost fails the preparation naming the package and the resolution; nothing is resolved again.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PackageResolution } from "../../src/kernel/packageResolution.js";
import { PackagePreparationError, PackagePreparer } from "../../src/sandbox/packagePreparer.js";
import type { FrozenResolutionSource } from "../../src/sandbox/ports.js";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "../support/fakeNpmRegistry.js";

const PACKAGE = "awaken-fixture-frozen";
let dir: string;
let registry: FakeNpmRegistry;

function pack(version: string): string {
  const source = join(dir, `src-${version}`);
  mkdirSync(source);
  writeFileSync(join(source, "package.json"), JSON.stringify({ name: PACKAGE, version, main: "index.js" }));
  writeFileSync(join(source, "index.js"), `module.exports = ${JSON.stringify(version)};\n`);
  execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
    cwd: source,
    env: { ...process.env, npm_config_offline: "true" },
    stdio: "ignore",
  });
  return join(dir, `${PACKAGE}-${version}.tgz`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "awaken-frozen-"));
  // Installers may run as an unprivileged uid: the tarballs' directory must be readable (the
  // registry reads them, not the installer, but the roots below live here too).
  chmodSync(dir, 0o755);
  registry = await startFakeNpmRegistry([{ name: PACKAGE, version: "1.0.0", tarball: pack("1.0.0") }]);
});
afterAll(async () => {
  await registry.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The Coordinator's record for one revision, in memory: first writer wins. */
function coordinatorRecord(): FrozenResolutionSource & { records: number; value: PackageResolution | null } {
  const state = {
    records: 0,
    value: null as PackageResolution | null,
    recorded: async () => state.value,
    record: async (resolution: PackageResolution) => {
      state.records += 1;
      state.value ??= resolution;
      return state.value;
    },
  };
  return state;
}

let hosts = 0;
/** A worker host of its own: a separate workspace root, installers pointed at the loopback registry. */
function host(): PackagePreparer {
  hosts += 1;
  const root = join(dir, `host-${hosts}`);
  mkdirSync(root);
  return new PackagePreparer({
    root,
    env: { PATH: process.env.PATH, npm_config_registry: registry.url, npm_config_fetch_retries: "0" },
  });
}

const installedVersion = (setDir: string) =>
  JSON.parse(readFileSync(join(setDir, "npm", "node_modules", PACKAGE, "package.json"), "utf8")).version;

describe("frozen npm resolution", () => {
  const packages = { npm: [`${PACKAGE}@^1.0.0`] };

  it("two hosts install the recorded version even after a newer matching one was published; a lost version fails naming it", async () => {
    const revision = coordinatorRecord();
    const first = await host().prepare(packages, revision);
    expect(installedVersion(first.dir)).toBe("1.0.0");
    expect(first.resolutionId).toMatch(/^pkgres_[0-9a-f]{32}$/);
    expect(revision.value?.id).toBe(first.resolutionId);
    expect(revision.records).toBe(1);
    expect(JSON.stringify(revision.value?.npm?.lockfile)).toContain('"integrity":"sha512-');

    registry.publish({ name: PACKAGE, version: "1.1.0", tarball: pack("1.1.0") });
    // Unfrozen, a fresh host now gets 1.1.0: what the frozen resolution prevents.
    const unfrozen = await host().prepare(packages);
    expect(installedVersion(unfrozen.dir)).toBe("1.1.0");

    const second = await host().prepare(packages, revision);
    expect(installedVersion(second.dir)).toBe("1.0.0");
    expect(second.resolutionId).toBe(first.resolutionId);
    expect(revision.records).toBe(1);

    // A host that resolves concurrently and loses the record installs the winner's resolution.
    const late = coordinatorRecord();
    late.recorded = async () => null;
    late.value = revision.value;
    const loser = await host().prepare(packages, late);
    expect(installedVersion(loser.dir)).toBe("1.0.0");
    expect(loser.resolutionId).toBe(first.resolutionId);

    // The registry loses the pinned version: a fresh host fails, naming it; nothing is re-resolved.
    registry.unpublish(PACKAGE, "1.0.0");
    const failure = await host()
      .prepare(packages, revision)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PackagePreparationError);
    const message = (failure as Error).message;
    expect(message).toContain(`frozen package resolution ${first.resolutionId}`);
    expect(message).toContain(`${PACKAGE}@1.0.0`);
    expect(message).toContain("is not resolved again");
    expect(message).not.toContain(dir);
    expect(revision.records).toBe(1);
    expect(revision.value?.id).toBe(first.resolutionId);
    // The host that already holds the set keeps using it (a marker check, no registry).
    expect(existsSync(second.dir)).toBe(true);
  }, 60_000);

  it("refuses a recorded resolution whose lockfile points outside the registry, before any installer runs", async () => {
    const revision = coordinatorRecord();
    await host().prepare(packages, revision);
    const tampered = structuredClone(revision.value!);
    const entry = tampered.npm!.lockfile.packages[`node_modules/${PACKAGE}`]!;
    entry.resolved = "file:/etc/passwd";
    revision.value = tampered;
    const asked = registry.requested.length;
    await expect(host().prepare(packages, revision)).rejects.toThrow(
      /frozen package resolution cannot be used: .*not fetched from a registry URL/,
    );
    expect(registry.requested.length).toBe(asked);
  }, 60_000);
});

/** A PATH whose python3 any user may run (not one under root's home). */
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";
const SYSTEM_PIP =
  spawnSync("python3", ["-m", "pip", "--version"], { env: { PATH: SYSTEM_PATH } }).status === 0;

/** A pure-Python wheel of `awaken-fixture` at `version`, whose module says its version. */
function wheel(wheels: string, version: string): string {
  const file = join(wheels, `awaken_fixture-${version}-py3-none-any.whl`);
  const script = `
import sys, zipfile
file, version = sys.argv[1], sys.argv[2]
info = f"awaken_fixture-{version}.dist-info"
with zipfile.ZipFile(file, "w") as z:
    z.writestr("awaken_fixture/__init__.py", f"VERSION = {version!r}\\n")
    z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\\nName: awaken-fixture\\nVersion: {version}\\n")
    z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    z.writestr(f"{info}/RECORD", "")
`;
  execFileSync("python3", ["-c", script, file, version], { env: { PATH: SYSTEM_PATH } });
  return file;
}

describe.skipIf(!SYSTEM_PIP)("frozen pip resolution", () => {
  it("freezes exact hashed lines; a newer wheel is not taken; a lost wheel fails naming it", async () => {
    const wheels = join(dir, "wheels");
    mkdirSync(wheels);
    wheel(wheels, "1.0.0");
    const pipHost = () => {
      hosts += 1;
      const root = join(dir, `host-${hosts}`);
      mkdirSync(root);
      // No index, only a local wheel directory: nothing may reach the network.
      return new PackagePreparer({
        root,
        env: { PATH: SYSTEM_PATH, PIP_NO_INDEX: "1", PIP_FIND_LINKS: wheels },
      });
    };
    const pinnedVersion = (setDir: string) =>
      execFileSync("ls", [join(setDir, "pip")])
        .toString()
        .match(/awaken_fixture-([0-9.]+)\.dist-info/)?.[1];
    const packages = { pip: ["awaken-fixture>=1"] };
    const revision = coordinatorRecord();

    const first = await pipHost().prepare(packages, revision);
    expect(pinnedVersion(first.dir)).toBe("1.0.0");
    expect(revision.value?.pip?.requirements).toEqual([
      expect.stringMatching(/^awaken-fixture==1\.0\.0 --hash=sha256:[0-9a-f]{64}$/),
    ]);
    expect(revision.value?.unfrozen).toEqual([]);

    wheel(wheels, "1.1.0");
    expect(pinnedVersion((await pipHost().prepare(packages)).dir)).toBe("1.1.0");
    const second = await pipHost().prepare(packages, revision);
    expect(pinnedVersion(second.dir)).toBe("1.0.0");
    expect(second.resolutionId).toBe(first.resolutionId);

    rmSync(join(wheels, "awaken_fixture-1.0.0-py3-none-any.whl"));
    const failure = await pipHost()
      .prepare(packages, revision)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(PackagePreparationError);
    expect((failure as Error).message).toContain(
      `the frozen package resolution ${first.resolutionId} (awaken-fixture==1.0.0) can no longer be installed`,
    );
    expect(revision.records).toBe(1);
  }, 120_000);
});
