/**
 * The scripted ACP harness (fakeHarness.mjs) with its SDK as one ESM file: a sandbox sees no
 * node_modules. Its target is the oldest Node a sandbox may run it with (the host's /usr/bin/node).
 */
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

let bundled: Promise<string> | undefined;

export function bundleFakeHarness(): Promise<string> {
  bundled ??= build({
    entryPoints: [fileURLToPath(new URL("./fakeHarness.mjs", import.meta.url))],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The MCP client's cross-spawn is CommonJS and requires Node's modules at run time.
    banner: {
      js: 'import { createRequire as __awakenRequire } from "node:module"; const require = __awakenRequire(import.meta.url);',
    },
    write: false,
    logLevel: "silent",
  }).then((built) => built.outputFiles[0]!.text);
  return bundled;
}
