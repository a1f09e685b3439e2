/**
 * The build context of the Dockerfile's `APP_SOURCE=prebuilt` path: this checkout's build (dist/,
 * bin/, package files) and the production part of its node_modules, which `npm ci` made for Node
 * 24 (better-sqlite3's binary is an N-API prebuild shipped in its package). CI takes this path
 * because the image build cannot reach the npm registry.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHECKOUT = new URL("../../../", import.meta.url).pathname;

interface LockEntry {
  dev?: boolean;
}

/** The lockfile's non-dev packages present in node_modules: what `npm prune --omit=dev` keeps. */
function productionPackages(): string[] {
  const lock = JSON.parse(readFileSync(join(CHECKOUT, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== "" && entry.dev !== true)
    .map(([path]) => path)
    .filter((path) => existsSync(join(CHECKOUT, path)));
}

/** A fresh directory holding the context; the caller removes it. */
export function prebuiltContext(): string {
  if (!existsSync(join(CHECKOUT, "dist/cli/main.js"))) {
    throw new Error("the checkout is not built: run `npm run build` before the container image test");
  }
  const context = mkdtempSync(join(tmpdir(), "awaken-image-context-"));
  for (const entry of ["package.json", "package-lock.json", "bin", "dist"]) {
    cpSync(join(CHECKOUT, entry), join(context, entry), { recursive: true });
  }
  mkdirSync(join(context, "node_modules"));
  const kept = productionPackages();
  for (const path of kept) {
    // A nested package is copied with its parent; only the outermost copy is made.
    const parent = kept.find((other) => other !== path && path.startsWith(`${other}/`));
    if (parent === undefined) cpSync(join(CHECKOUT, path), join(context, path), { recursive: true });
  }
  return context;
}
