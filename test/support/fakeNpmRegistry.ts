import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeNpmRegistry {
  /** `http://127.0.0.1:<port>/`: what `npm_config_registry` is set to. */
  url: string;
  /** Names npm asked for, in order. */
  requested: string[];
  /** Serves one more version of a package (it becomes `latest` when it is the newest added). */
  publish(pkg: { name: string; version: string; tarball: string }): void;
  /** Stops serving a version: its packument entry and its tarball are gone, as after an unpublish. */
  unpublish(name: string, version: string): void;
  /**
   * Holds every tarball request from now on until `release` (a test catches an installer mid-fetch);
   * `waiting` counts the requests held. `close` releases them.
   */
  holdTarballs(): { waiting(): number; release(): void };
  close(): Promise<void>;
}

/**
 * A loopback npm registry serving the given versions of each package from a tarball made by
 * `npm pack` (packument at `/<name>`, tarball at `/<name>/-/<name>-<version>.tgz`); any other name
 * is a 404, as the real registry answers. No network is reached.
 */
export async function startFakeNpmRegistry(
  /** `bin`: the package's bin map, which a real registry's version manifest carries (npm links it). */
  /** `manifest`: more of the version manifest (dependencies, os, cpu, engines…), as published. */
  packages: ReadonlyArray<{
    name: string;
    version: string;
    /** Absent: the version is listed (with `integrity`) but its tarball is a 404, as for a platform never fetched. */
    tarball?: string;
    integrity?: string;
    bin?: Record<string, string>;
    manifest?: Record<string, unknown>;
  }>,
): Promise<FakeNpmRegistry> {
  const requested: string[] = [];
  const served = [...packages];
  const tarballs = new Map<string, Buffer>();
  let held: Array<() => void> | null = null;
  let heldCount = 0;
  const release = () => {
    const waiting = held ?? [];
    held = null;
    for (const answer of waiting) answer();
  };
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!).slice(1);
    const tarball = tarballs.get(path);
    if (tarball) {
      const answer = () => {
        if (!res.destroyed) res.writeHead(200, { "content-type": "application/octet-stream" }).end(tarball);
      };
      if (held === null) answer();
      else {
        heldCount++;
        held.push(answer);
      }
      return;
    }
    requested.push(path);
    const versions = served.filter((p) => p.name === path);
    if (versions.length === 0) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
      return;
    }
    const entries: Record<string, unknown> = {};
    for (const pkg of versions) {
      const file = `${pkg.name}/-/${pkg.name}-${pkg.version}.tgz`;
      const bytes = pkg.tarball === undefined ? null : readFileSync(pkg.tarball);
      if (bytes) tarballs.set(file, bytes);
      const dist = bytes
        ? {
            tarball: `${url}${file}`,
            shasum: createHash("sha1").update(bytes).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
          }
        : { tarball: `${url}${file}`, integrity: pkg.integrity };
      entries[pkg.version] = {
        ...pkg.manifest,
        name: pkg.name,
        version: pkg.version,
        dist,
        ...(pkg.bin ? { bin: pkg.bin } : {}),
      };
    }
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(
        JSON.stringify({ name: path, "dist-tags": { latest: versions.at(-1)!.version }, versions: entries }),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    requested,
    publish: (pkg) => served.push(pkg),
    unpublish: (name, version) => {
      const at = served.findIndex((p) => p.name === name && p.version === version);
      if (at !== -1) served.splice(at, 1);
      tarballs.delete(`${name}/-/${name}-${version}.tgz`);
    },
    holdTarballs: () => {
      held ??= [];
      heldCount = 0;
      return { waiting: () => heldCount, release };
    },
    close: () => {
      release();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
