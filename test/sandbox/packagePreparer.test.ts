import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bwrapCommand, DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { NoneTierProvider } from "../../src/sandbox/noneTier.js";
import { PackagePreparationError, PackagePreparer, packagesHash } from "../../src/sandbox/packagePreparer.js";
import { TieredSandboxProvider } from "../../src/sandbox/tieredProvider.js";

let root: string;
let bin: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "awaken-packages-"));
  bin = join(root, "bin");
  mkdirSync(bin);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/**
 * A stand-in `npm` on PATH: logs its argv, takes a while, then installs a module exporting a
 * string into `--prefix` (or fails with a message on stderr when `FAIL` is in the specs).
 */
function fakeNpm(): string {
  const log = join(root, "npm.log");
  const script = `#!/bin/sh
echo "$@" >> ${log}
sleep 0.2
case "$*" in *FAIL*) echo "npm error 404 Not Found - FAIL is not in this registry" >&2; exit 1;; esac
mkdir -p "$3/node_modules/fake-pkg"
echo 'module.exports = "fake-pkg works";' > "$3/node_modules/fake-pkg/index.js"
`;
  writeFileSync(join(bin, "npm"), script);
  chmodSync(join(bin, "npm"), 0o755);
  return log;
}

const env = () => ({ PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` });
const entries = () => readdirSync(join(root, "ws", ".packages"));

describe("PackagePreparer", () => {
  it("hashes the canonical six lists: order of managers and absent lists do not matter", () => {
    expect(packagesHash({ npm: ["a"], pip: [] })).toBe(
      packagesHash({ apt: [], cargo: [], gem: [], go: [], pip: [], npm: ["a"] }),
    );
    expect(packagesHash({ npm: ["a", "b"] })).not.toBe(packagesHash({ npm: ["b", "a"] }));
    expect(packagesHash({ npm: ["a"] })).not.toBe(packagesHash({ pip: ["a"] }));
  });

  it("prepares once: concurrent callers share one run, later callers find the ready set", async () => {
    const log = fakeNpm();
    const preparer = new PackagePreparer({ root: join(root, "ws"), env: env() });
    const [a, b] = await Promise.all([
      preparer.prepare({ npm: ["x@1"] }),
      preparer.prepare({ npm: ["x@1"] }),
    ]);
    expect(a).toEqual(b);
    expect(a.dir).toBe(join(root, "ws", ".packages", packagesHash({ npm: ["x@1"] })));
    const runs = readFileSync(log, "utf8").trim().split("\n");
    expect(runs).toHaveLength(1);
    // Installed into a private staging directory, renamed into place once ready.
    const staging = `${join(root, "ws", ".packages")}/.staging-${a.hash}-${process.pid}-[0-9a-f-]{36}`;
    expect(runs[0]).toMatch(
      new RegExp(`^install --prefix ${staging}/npm --no-audit --no-fund --ignore-scripts x@1$`),
    );
    expect(existsSync(join(a.dir, ".ready"))).toBe(true);
    expect(existsSync(join(a.dir, "npm", "node_modules", "fake-pkg", "index.js"))).toBe(true);
    // A new preparer (a restarted worker) on the same root: a marker check, no install.
    await new PackagePreparer({ root: join(root, "ws"), env: env() }).prepare({ npm: ["x@1"] });
    expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(1);
    expect(entries()).toEqual([a.hash]);
  });

  it("reports the installer's stderr and leaves nothing behind when it fails", async () => {
    fakeNpm();
    const preparer = new PackagePreparer({ root: join(root, "ws"), env: env() });
    const failure = await preparer.prepare({ npm: ["ok", "FAIL"] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PackagePreparationError);
    expect((failure as PackagePreparationError).manager).toBe("npm");
    expect((failure as Error).message).toMatch(
      /config\.packages\.npm \(ok, FAIL\) could not be installed: npm exited with 1: npm error 404 Not Found/,
    );
    expect(entries()).toEqual([]);
  });

  it.each(["apt", "cargo", "gem", "go"])(
    "refuses %s packages, naming the manager and what to do",
    async (manager) => {
      fakeNpm();
      const preparer = new PackagePreparer({ root: join(root, "ws"), env: env() });
      const failure = await preparer.prepare({ npm: ["x"], [manager]: ["thing"] }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(PackagePreparationError);
      expect((failure as Error).message).toContain(`config.packages.${manager} (thing)`);
      expect((failure as Error).message).toContain("bake them into the worker host or its image");
      expect(existsSync(join(root, "npm.log"))).toBe(false);
    },
  );

  it("refuses pip packages when `python3 -m pip` does not run on the host", async () => {
    const preparer = new PackagePreparer({ root: join(root, "ws"), env: { PATH: bin } });
    await expect(preparer.prepare({ pip: ["requests"] })).rejects.toThrow(
      /config\.packages\.pip \(requests\): `python3 -m pip` does not run on this worker host/,
    );
  });
});

describe("sandboxes with packages", () => {
  it("a worker prepares on first use (realize); the none tier's commands see the set", async () => {
    const log = fakeNpm();
    const ws = join(root, "ws");
    const sandboxes = new TieredSandboxProvider(
      { none: new NoneTierProvider(ws) },
      new PackagePreparer({ root: ws, env: env() }),
    );
    const spec = {
      tier: "none",
      sessionId: "s-pkg",
      networking: { type: "unrestricted" },
      packages: { npm: ["x@1"], apt: [] },
    } as const;
    const sandbox = await sandboxes.realize(spec);
    const result = await sandbox.exec({
      argv: ["node", "-e", "console.log(require('fake-pkg'), process.env.PATH.split(':')[0])"],
      timeoutMs: 10_000,
      maxOutputBytes: 10_000,
      signal: new AbortController().signal,
    });
    const dir = join(ws, ".packages", packagesHash(spec.packages));
    expect(result.stdout).toBe(`fake-pkg works ${dir}/npm/node_modules/.bin\n`);
    await sandboxes.realize({ ...spec, sessionId: "s-pkg-2" });
    expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(1);
    await expect(
      sandboxes.realize({ ...spec, sessionId: "s-bad", packages: { gem: ["rails"] } }),
    ).rejects.toThrow(/config\.packages\.gem \(rails\)/);
    await sandboxes.close();
  });

  it.skipIf(spawnSync("python3", ["-m", "pip", "--version"]).status !== 0)(
    "pip: a wheel is installed with --target and the none tier's python sees it on PYTHONPATH",
    async () => {
      const wheel = join(root, "awaken_fixture-1.0.0-py3-none-any.whl");
      writeWheel(wheel);
      const ws = join(root, "ws");
      const sandboxes = new TieredSandboxProvider(
        { none: new NoneTierProvider(ws) },
        // No index: nothing may reach the network.
        new PackagePreparer({ root: ws, env: { PATH: process.env.PATH, HOME: root, PIP_NO_INDEX: "1" } }),
      );
      const sandbox = await sandboxes.realize({
        tier: "none",
        sessionId: "s-pip",
        networking: { type: "unrestricted" },
        packages: { pip: [wheel] },
      });
      const result = await sandbox.exec({
        argv: ["python3", "-c", "import awaken_fixture; print(awaken_fixture.GREETING)"],
        timeoutMs: 10_000,
        maxOutputBytes: 10_000,
        signal: new AbortController().signal,
      });
      expect(result.stdout).toBe("hello from a wheel\n");
      await sandboxes.close();
    },
  );

  it("bwrap binds a prepared set read-only at /opt/awaken/packages and points PATH, NODE_PATH, PYTHONPATH at it", () => {
    const { args } = bwrapCommand({
      bashPath: "/usr/bin/bash",
      prlimitPath: "/usr/bin/prlimit",
      bwrapPath: "/usr/bin/bwrap",
      limits: DEFAULT_LIMITS,
      systemEntries: [],
      workspaceHostPath: "/srv/ws/s-1",
      packagesDir: "/srv/ws/.packages/abc",
      argv: ["true"],
    });
    const at = (flag: string, ...values: string[]) =>
      args.some((arg, i) => arg === flag && values.every((v, j) => args[i + 1 + j] === v));
    expect(at("--ro-bind", "/srv/ws/.packages/abc", "/opt/awaken/packages")).toBe(true);
    expect(
      at(
        "--setenv",
        "PATH",
        "/opt/awaken/packages/npm/node_modules/.bin:/opt/awaken/packages/pip/bin:/usr/local/bin:/usr/bin:/bin",
      ),
    ).toBe(true);
    expect(at("--setenv", "NODE_PATH", "/opt/awaken/packages/npm/node_modules")).toBe(true);
    expect(at("--setenv", "PYTHONPATH", "/opt/awaken/packages/pip")).toBe(true);
    // Bound before the root is made read-only.
    expect(args.indexOf("/opt/awaken/packages")).toBeLessThan(args.indexOf("--remount-ro"));
    const without = bwrapCommand({
      bashPath: "/usr/bin/bash",
      prlimitPath: "/usr/bin/prlimit",
      bwrapPath: "/usr/bin/bwrap",
      limits: DEFAULT_LIMITS,
      systemEntries: [],
      workspaceHostPath: "/srv/ws/s-1",
      argv: ["true"],
    }).args;
    expect(without.join(" ")).not.toContain("/opt/awaken/packages");
    expect(without.join(" ")).not.toContain("NODE_PATH");
  });
});

/** A minimal pure-Python wheel, written by hand (no build tools, no network). */
function writeWheel(path: string): void {
  const files: Record<string, string> = {
    "awaken_fixture/__init__.py": "GREETING = 'hello from a wheel'\n",
    "awaken_fixture-1.0.0.dist-info/METADATA":
      "Metadata-Version: 2.1\nName: awaken-fixture\nVersion: 1.0.0\n",
    "awaken_fixture-1.0.0.dist-info/WHEEL":
      "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
  };
  const digest = (text: string) => `sha256=${createHash("sha256").update(text).digest("base64url")}`;
  const record = Object.entries(files)
    .map(([name, text]) => `${name},${digest(text)},${Buffer.byteLength(text)}\n`)
    .join("");
  files["awaken_fixture-1.0.0.dist-info/RECORD"] = `${record}awaken_fixture-1.0.0.dist-info/RECORD,,\n`;
  const script =
    "import json, sys, zipfile\n" +
    "files = json.loads(sys.stdin.read())\n" +
    "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n" +
    "    [z.writestr(name, text) for name, text in files.items()]\n";
  const made = spawnSync("python3", ["-c", script, path], { input: JSON.stringify(files) });
  if (made.status !== 0) throw new Error(`could not write the wheel: ${made.stderr}`);
}
