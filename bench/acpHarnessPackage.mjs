// The scripted ACP harness (test/support/acp/fakeHarness.mjs) as an environment installs it: an npm
// package on a loopback registry, and an operator runtimes file naming it `fake`. The bench's own
// copy of test/support/acp/harnessPackage.ts, whose `.js` imports Node's type stripping cannot
// follow; the bundle and the registry are the tests' own.
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const { bundleFakeHarness } = await import("../test/support/acp/fakeHarnessBundle.ts");
const { startFakeNpmRegistry } = await import("../test/support/fakeNpmRegistry.ts");

export const HARNESS_PACKAGE = "awaken-fake-acp-harness";

/** Packs and serves the harness under `scratch`: `{ registry, runtimesFile }`; close the registry. */
export async function serveHarnessPackage(scratch) {
  const source = join(scratch, "pkg");
  mkdirSync(source);
  const bin = { "fake-acp-harness": "harness.mjs" };
  writeFileSync(
    join(source, "package.json"),
    JSON.stringify({ name: HARNESS_PACKAGE, version: "1.0.0", bin }),
  );
  writeFileSync(join(source, "harness.mjs"), `#!/usr/bin/env node\n${await bundleFakeHarness()}`);
  chmodSync(join(source, "harness.mjs"), 0o755);
  execFileSync("npm", ["pack", "--silent", "--pack-destination", scratch], {
    cwd: source,
    env: { ...process.env, npm_config_offline: "true" },
    stdio: "ignore",
  });
  const tarball = join(scratch, `${HARNESS_PACKAGE}-1.0.0.tgz`);
  const registry = await startFakeNpmRegistry([{ name: HARNESS_PACKAGE, version: "1.0.0", tarball, bin }]);
  const runtimesFile = join(scratch, "runtimes.json");
  writeFileSync(
    runtimesFile,
    JSON.stringify({
      runtimes: [
        {
          name: "fake",
          description: "the scripted test harness",
          command: ["fake-acp-harness"],
          package: { manager: "npm", name: HARNESS_PACKAGE, version: "1.0.0" },
          env: {},
          memory_file: "AGENTS.md",
        },
      ],
    }),
  );
  return { registry, runtimesFile };
}
