import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeNpmRegistry {
  /** `http://127.0.0.1:<port>/`: what `npm_config_registry` is set to. */
  url: string;
  /** Names npm asked for, in order. */
  requested: string[];
  close(): Promise<void>;
}

/**
 * A loopback npm registry serving one version of each given package from a tarball made by
 * `npm pack` (packument at `/<name>`, tarball at `/<name>/-/<name>-<version>.tgz`); any other name
 * is a 404, as the real registry answers. No network is reached.
 */
export async function startFakeNpmRegistry(
  packages: ReadonlyArray<{ name: string; version: string; tarball: string }>,
): Promise<FakeNpmRegistry> {
  const requested: string[] = [];
  const tarballs = new Map<string, Buffer>();
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!).slice(1);
    const tarball = tarballs.get(path);
    if (tarball) {
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(tarball);
      return;
    }
    requested.push(path);
    const pkg = packages.find((p) => p.name === path);
    if (!pkg) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
      return;
    }
    const bytes = readFileSync(pkg.tarball);
    const file = `${pkg.name}/-/${pkg.name}-${pkg.version}.tgz`;
    tarballs.set(file, bytes);
    const dist = {
      tarball: `${url}${file}`,
      shasum: createHash("sha1").update(bytes).digest("hex"),
      integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
    };
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        name: pkg.name,
        "dist-tags": { latest: pkg.version },
        versions: { [pkg.version]: { name: pkg.name, version: pkg.version, dist } },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    requested,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
