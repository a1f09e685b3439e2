import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/**
 * The Console's build (`npm run build`): a static bundle in dist/console that the server serves at
 * `/console`. Relative asset URLs, so it works behind a reverse proxy under any path prefix; hashed
 * file names, so the server can cache them for good.
 */
export default defineConfig({
  root: fileURLToPath(new URL("src/console/", import.meta.url)),
  base: "./",
  publicDir: false,
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("dist/console/", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // Every byte comes from these files: no inline module preload script, no inlined assets.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    rolldownOptions: {
      // React Query marks its hooks "use client" for server-component bundlers; a browser bundle has no such split.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
});
