import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** Where `npm run build` puts the Console, from this file in src/ or in dist/ alike. */
export const BUILT_CONSOLE_DIR = fileURLToPath(new URL("../../../dist/console/", import.meta.url));

export interface ConsoleFile {
  type: string;
  body: Buffer;
  /**
   * The gzipped body: the build's `<name>.gz` when it made one, else gzipped on the first request
   * that accepts it and kept (the bundle is large and phones are slow). Null when it would not shrink.
   */
  gzip(): Buffer | null;
}

export interface ConsoleAssets {
  index: string;
  /** The hashed files under `assets/`, by name: nothing else on disk is ever served. */
  files: ReadonlyMap<string, ConsoleFile>;
}

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

/** Reads the built Console into memory once; null when it was not built. */
export function loadConsoleAssets(dir: string): ConsoleAssets | null {
  const indexPath = join(dir, "index.html");
  if (!existsSync(indexPath)) return null;
  const files = new Map<string, ConsoleFile>();
  const assetsDir = join(dir, "assets");
  const names = existsSync(assetsDir) ? readdirSync(assetsDir) : [];
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(assetsDir, name));
    const prebuilt = join(assetsDir, `${name}.gz`);
    let gzip: Buffer | null | undefined = existsSync(prebuilt) ? readFileSync(prebuilt) : undefined;
    files.set(name, {
      type,
      body,
      gzip: () => {
        if (gzip === undefined) {
          const packed = gzipSync(body);
          gzip = packed.length < body.length ? packed : null;
        }
        return gzip;
      },
    });
  }
  return { index: readFileSync(indexPath, "utf8"), files };
}
