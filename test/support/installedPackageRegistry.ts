/**
 * A loopback npm registry serving one package installed in this repository's `node_modules` and
 * everything it depends on, as the public registry would: each package's own published manifest
 * (its package.json: dependencies, optional dependencies, os, cpu, bin) and a tarball of its
 * installed files. Tests install a real registry package (a shipped ACP harness) through the
 * product's own installer with no network: `npm ci` put the bytes here, the test serves them back.
 * Optional dependencies npm left out (other platforms) are listed from the lockfile, manifest and
 * integrity only: a resolver needs to see them (npm ci refuses a lockfile that lacks them), an
 * installer never fetches them on this platform, and their tarballs are a 404.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "./fakeNpmRegistry.js";

const ROOT = resolve(import.meta.dirname, "..", "..");

interface Installed {
  name: string;
  version: string;
  /** null: an optional package for another platform, known from the lockfile only. */
  dir: string | null;
  integrity?: string;
  manifest: Record<string, unknown>;
}

const LOCKED = (
  JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
    packages: Record<string, Record<string, unknown>>;
  }
).packages;

/** What a registry's manifest says of a package the lockfile records (the fields npm resolves by). */
function lockedManifest(name: string): {
  version: string;
  integrity: string;
  manifest: Record<string, unknown>;
} {
  const entry = LOCKED[`node_modules/${name}`];
  if (!entry) throw new Error(`${name} is neither installed nor in package-lock.json`);
  const { version, integrity, dev: _dev, optional: _optional, resolved: _resolved, ...manifest } = entry;
  return { version: String(version), integrity: String(integrity), manifest: { ...manifest, name, version } };
}

/** Where Node's resolution finds `name` from a package installed at `from`, or null. */
function locate(name: string, from: string): string | null {
  for (let dir = from; dir.startsWith(ROOT); dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dir === ROOT) break;
  }
  return null;
}

/** `name` and its dependency closure as installed (required dependencies must be there). */
export function installedClosure(name: string): Installed[] {
  const found = new Map<string, Installed>();
  const visit = (dependency: string, from: string, optional: boolean) => {
    const dir = from === "" ? null : locate(dependency, from);
    let pkg: Installed;
    if (dir === null) {
      if (!optional) throw new Error(`${dependency} is not installed (needed from ${from}); run npm ci`);
      pkg = { name: dependency, dir: null, ...lockedManifest(dependency) };
      if (found.has(`${pkg.name}@${pkg.version}`)) return;
    } else {
      if ([...found.values()].some((p) => p.dir === dir)) return;
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, unknown>;
      pkg = { name: dependency, version: String(manifest.version), dir, manifest };
    }
    found.set(`${pkg.name}@${pkg.version}`, pkg);
    const manifest = pkg.manifest;
    // A package known from the lockfile only has its dependencies looked up there too.
    const next = pkg.dir ?? "";
    const deps = (field: string) => Object.keys((manifest[field] as Record<string, string>) ?? {});
    for (const d of deps("dependencies")) visit(d, next, pkg.dir === null);
    for (const d of deps("optionalDependencies")) visit(d, next, true);
  };
  visit(name, ROOT, false);
  return [...found.values()];
}

/**
 * Serves `name`'s installed closure. Each tarball is the package's installed files under
 * `package/` (its nested node_modules left out: those are packages of their own), written in
 * `scratch`, which the caller removes.
 */
export async function serveInstalledPackage(name: string, scratch: string): Promise<FakeNpmRegistry> {
  const packages = installedClosure(name).map((pkg, index) => {
    if (pkg.dir === null) {
      return { name: pkg.name, version: pkg.version, manifest: pkg.manifest, integrity: pkg.integrity };
    }
    const tarball = join(scratch, `pkg-${index}.tgz`);
    execFileSync("tar", [
      "-czf",
      tarball,
      "--exclude=./node_modules",
      "--transform=s,^\\.,package,",
      "-C",
      pkg.dir,
      ".",
    ]);
    const { devDependencies: _dev, ...manifest } = pkg.manifest;
    return { name: pkg.name, version: pkg.version, tarball, manifest };
  });
  return startFakeNpmRegistry(packages);
}
