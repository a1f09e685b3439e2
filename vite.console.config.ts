import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

const OUT_DIR = fileURLToPath(new URL("dist/console/", import.meta.url));

/** Gzips every script and style once at build time, so no server start or first request pays for it. */
function precompress(): Plugin {
  return {
    name: "awaken-console-precompress",
    apply: "build",
    closeBundle() {
      const assets = join(OUT_DIR, "assets");
      for (const name of readdirSync(assets)) {
        if (!/\.(js|css)$/.test(name)) continue;
        const body = readFileSync(join(assets, name));
        const packed = gzipSync(body, { level: 9 });
        if (packed.length < body.length) writeFileSync(join(assets, `${name}.gz`), packed);
      }
    },
  };
}

/**
 * The Console's build (`npm run build`): a static bundle in dist/console that the server serves at
 * `/console`. Relative asset URLs, so it works behind a reverse proxy under any path prefix; hashed
 * file names, so the server can cache them for good.
 */
export default defineConfig({
  root: fileURLToPath(new URL("src/console/", import.meta.url)),
  base: "./",
  publicDir: false,
  plugins: [precompress()],
  logLevel: "warn",
  build: {
    outDir: OUT_DIR,
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // Every byte comes from these files: no inline module preload script, no inlined assets.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    // The SDK alone is most of the signed-in chunk; it loads after the sign-in form has shown.
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // React Query marks its hooks "use client" for server-component bundlers; a browser bundle has no such split.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
});
