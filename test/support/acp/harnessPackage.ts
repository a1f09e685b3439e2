/**
 * The scripted ACP harness (fakeHarness.mjs) as an environment would install it: an npm package
 * whose bin is the bundled harness, served by a loopback registry, with an operator runtime file
 * naming it (plus variants that fail their launch). Tests point a server's installers at
 * `registry.url` and its `--acp-runtimes` at `runtimesFile`.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { acpRuntimeCatalogFrom } from "../../../src/brains/catalog.js";
import { type FakeNpmRegistry, startFakeNpmRegistry } from "../fakeNpmRegistry.js";
import { startTestServer, type TestServer } from "../testServer.js";
import { bundleFakeHarness } from "./fakeHarnessBundle.js";

export const HARNESS_PACKAGE = "awaken-fake-acp-harness";

export interface HarnessPackage {
  registry: FakeNpmRegistry;
  runtimesFile: string;
}

export async function serveHarnessPackage(scratch: string): Promise<HarnessPackage> {
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
  const registry = await startFakeNpmRegistry([
    { name: HARNESS_PACKAGE, version: "1.0.0", tarball: join(scratch, `${HARNESS_PACKAGE}-1.0.0.tgz`), bin },
  ]);
  const runtime = (name: string, env: Record<string, string | { vault_secret: string }> = {}) => ({
    name,
    description: "the scripted test harness",
    command: ["fake-acp-harness"],
    package: { manager: "npm", name: HARNESS_PACKAGE, version: "1.0.0" },
    env,
    memory_file: "AGENTS.md",
  });
  const runtimesFile = join(scratch, "runtimes.json");
  writeFileSync(
    runtimesFile,
    JSON.stringify({
      runtimes: [
        runtime("fake"),
        runtime("fake-broken", { FAKE_HARNESS_FAIL_INIT: "1" }),
        runtime("fake-flaky", { FAKE_HARNESS_DROP_BEFORE_NEW: "1" }),
        runtime("fake-keyed", { HARNESS_TOKEN: { vault_secret: "HARNESS_TOKEN" } }),
      ],
    }),
  );
  return { registry, runtimesFile };
}

/**
 * The test server for harness sessions: the runtime file's runtimes, package installs from
 * `registryUrl`, quick worker polls; `options` adds to (or overrides) that.
 */
export function startHarnessServer(
  runtimesFile: string,
  registryUrl: string,
  options: Parameters<typeof startTestServer>[0] = {},
): Promise<TestServer> {
  return startTestServer({
    acpRuntimes: acpRuntimeCatalogFrom(runtimesFile),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      npm_config_registry: registryUrl,
      npm_config_fetch_retries: "0",
    },
    workerPollMs: 50,
    ...options,
  });
}
