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
  statSync,
  writeFileSync,
} from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bwrapCommand, DEFAULT_LIMITS } from "../../src/sandbox/bwrapArgs.js";
import { installerEnv } from "../../src/sandbox/installerEnv.js";
import { NoneTierProvider } from "../../src/sandbox/noneTier.js";
import { PackagePreparationError, PackagePreparer, packagesHash } from "../../src/sandbox/packagePreparer.js";
import { TieredSandboxProvider } from "../../src/sandbox/tieredProvider.js";

let root: string;
let bin: string;
let logs: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "awaken-packages-"));
  // Installers may run as an unprivileged uid (the worker is root here): they reach the stand-in
  // installers in bin/ and write their logs to logs/.
  chmodSync(root, 0o755);
  bin = join(root, "bin");
  mkdirSync(bin);
  logs = join(root, "logs");
  mkdirSync(logs);
  chmodSync(logs, 0o777);
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

/**
 * A stand-in `npm` on PATH: logs its argv, takes a while, then installs a module exporting a
 * string into `--prefix` (or fails with a message on stderr when `FAIL` is in the specs). `extra`
 * runs first (shell), e.g. to record who it runs as.
 */
function fakeNpm(extra = ""): string {
  const log = join(logs, "npm.log");
  const script = `#!/bin/sh
${extra}
echo "$@" >> ${log}
sleep 0.2
case "$*" in *FAIL*) echo "npm error 404 Not Found - FAIL is not in this registry" >&2; exit 1;; esac
mkdir -p "$3/node_modules/fake-pkg"
echo 'module.exports = "fake-pkg works";' > "$3/node_modules/fake-pkg/index.js"
chmod 4755 "$3/node_modules/fake-pkg/index.js"
`;
  writeFileSync(join(bin, "npm"), script);
  chmodSync(join(bin, "npm"), 0o755);
  return log;
}

const env = () => ({ PATH: `${bin}:/usr/local/bin:/usr/bin:/bin` });
/** A PATH whose python3 any user may run (not one under root's home). */
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";
const SYSTEM_PIP =
  spawnSync("python3", ["-m", "pip", "--version"], { env: { PATH: SYSTEM_PATH } }).status === 0;
const entries = () => {
  const dir = join(root, "ws", ".packages");
  return existsSync(dir) ? readdirSync(dir) : [];
};

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
    // Installed into the installer's own scratch directory (outside the data dir), the specs after
    // `--`; copied into a staging directory, renamed into place once ready.
    const scratch = `${tmpdir()}/awaken-prepare-[A-Za-z0-9]{6}`;
    expect(runs[0]).toMatch(
      new RegExp(`^install --prefix ${scratch}/npm --no-audit --no-fund --ignore-scripts -- x@1$`),
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
      expect(existsSync(join(logs, "npm.log"))).toBe(false);
    },
  );

  it("refuses pip packages when `python3 -m pip` does not run on the host", async () => {
    const preparer = new PackagePreparer({ root: join(root, "ws"), env: { PATH: bin } });
    await expect(preparer.prepare({ pip: ["requests"] })).rejects.toThrow(
      /config\.packages\.pip \(requests\): `python3 -m pip` does not run on this worker host/,
    );
  });
});

const IS_ROOT = process.getuid?.() === 0;
/** Secrets the worker's environment holds; none may reach an installer. */
const WORKER_SECRETS = {
  AWAKEN_MASTER_KEY: "master-key-secret-value",
  AWAKEN_WORKER_TOKEN: "worker-token-secret-value",
  ANTHROPIC_API_KEY: "sk-ant-secret-value",
  OPENAI_API_KEY: "sk-openai-secret-value",
  NODE_OPTIONS: "--require /tmp/evil.js",
  npm_config_ignore_scripts: "false",
  PIP_REQUIREMENT: "/tmp/evil.txt",
};

describe("installer hardening", () => {
  it.each([
    ["npm", ["lodash", "--ignore-scripts=false", "/path/evil-1.0.0.tgz"], 1],
    ["npm", ["--offline"], 0],
    ["npm", ["file:../evil"], 0],
    ["pip", ["--no-index", "-r", "/data/master.key"], 0],
    ["pip", ["requests", "./evil"], 1],
  ] as const)(
    "refuses %s %j even when it bypassed validation (a stored revision): nothing runs",
    async (manager, list, index) => {
      fakeNpm();
      const preparer = new PackagePreparer({ root: join(root, "ws"), env: env() });
      const failure = await preparer.prepare({ [manager]: [...list] }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(PackagePreparationError);
      expect((failure as PackagePreparationError).manager).toBe(manager);
      expect((failure as Error).message).toMatch(
        new RegExp(`^config\\.packages\\.${manager}\\[${index}\\]: .* is not a package requirement`),
      );
      expect(existsSync(join(logs, "npm.log"))).toBe(false);
      expect(entries()).toEqual([]);
    },
  );

  it("installerEnv keeps registry, proxy and certificate settings by name and nothing else", () => {
    const env = installerEnv(
      {
        ...WORKER_SECRETS,
        PATH: "/usr/bin",
        HOME: "/root",
        "npm_config_@myorg:registry": "https://npm.example/",
        "npm_config_//npm.example/:_authToken": "token-secret-value",
        npm_config_userconfig: "/root/.npmrc",
        PIP_CONFIG_FILE: "/root/pip.conf",
        PIP_EXTRA_INDEX_URL: "https://pypi.example/simple/",
        no_proxy: "localhost",
      },
      "/scratch/home",
      "/scratch/tmp",
    );
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/scratch/home",
      TMPDIR: "/scratch/tmp",
      LANG: "C.UTF-8",
      "npm_config_@myorg:registry": "https://npm.example/",
      PIP_EXTRA_INDEX_URL: "https://pypi.example/simple/",
      no_proxy: "localhost",
      npm_config_ignore_scripts: "true",
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
      PIP_DISABLE_PIP_VERSION_CHECK: "1",
      PYTHONNOUSERSITE: "1",
    });
  });

  it("runs the installer with a scrubbed environment, a scratch home and cwd, and removes the scratch", async () => {
    const seen = join(logs, "seen");
    fakeNpm(`env > ${seen}.env; pwd > ${seen}.pwd`);
    const preparer = new PackagePreparer({
      root: join(root, "ws"),
      env: {
        ...env(),
        ...WORKER_SECRETS,
        HOME: "/root",
        npm_config_registry: "http://127.0.0.1:9/",
        NPM_CONFIG_FETCH_RETRIES: "0",
        PIP_INDEX_URL: "http://127.0.0.1:9/simple/",
        HTTPS_PROXY: "http://127.0.0.1:3128",
      },
    });
    await preparer.prepare({ npm: ["x@1"] });
    const installerEnv = Object.fromEntries(
      readFileSync(`${seen}.env`, "utf8")
        .trim()
        .split("\n")
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    const scratch = /--prefix (\S+)\/npm /.exec(readFileSync(join(logs, "npm.log"), "utf8"))![1]!;
    expect(scratch.startsWith(`${tmpdir()}/awaken-prepare-`)).toBe(true);
    for (const name of Object.keys(WORKER_SECRETS)) {
      if (name !== "npm_config_ignore_scripts") expect(installerEnv).not.toHaveProperty(name);
    }
    expect(JSON.stringify(installerEnv)).not.toMatch(/secret-value|evil/);
    expect(installerEnv).toMatchObject({
      PATH: env().PATH,
      HOME: `${scratch}/home`,
      TMPDIR: `${scratch}/tmp`,
      npm_config_ignore_scripts: "true",
      npm_config_registry: "http://127.0.0.1:9/",
      NPM_CONFIG_FETCH_RETRIES: "0",
      PIP_INDEX_URL: "http://127.0.0.1:9/simple/",
      HTTPS_PROXY: "http://127.0.0.1:3128",
    });
    // Only the shell's own variables besides the ones the preparer set.
    const allowed = new Set([
      ...Object.keys(installerEnv).filter((name) =>
        /^(npm_config_|NPM_CONFIG_|PIP_|HTTPS_PROXY$)/.test(name),
      ),
      "PATH",
      "HOME",
      "TMPDIR",
      "LANG",
      "PYTHONNOUSERSITE",
      "PWD",
      "SHLVL",
      "_",
      "OLDPWD",
    ]);
    expect(Object.keys(installerEnv).filter((name) => !allowed.has(name))).toEqual([]);
    expect(readFileSync(`${seen}.pwd`, "utf8").trim()).toBe(`${scratch}/work`);
    expect(existsSync(scratch)).toBe(false);
  });

  it.skipIf(!IS_ROOT)(
    "as root: the installer runs as an unprivileged uid that cannot read the data dir; the set is the worker's",
    async () => {
      // A data dir as the server keeps it: 0700, its master key 0600.
      const dataDir = join(root, "data");
      mkdirSync(dataDir, { mode: 0o700 });
      writeFileSync(join(dataDir, "master.key"), "the-master-key-bytes", { mode: 0o600 });
      const seen = join(logs, "who");
      fakeNpm(
        `id -u > ${seen}.uid; id -g > ${seen}.gid; id -G > ${seen}.groups; ` +
          `cat ${dataDir}/master.key > ${seen}.key 2>&1 || echo DENIED >> ${seen}.key; ` +
          `ls ${join(root, "ws")} > ${seen}.ws 2>&1 || echo DENIED >> ${seen}.ws`,
      );
      const ws = join(root, "ws");
      mkdirSync(ws, { mode: 0o700 });
      const prepared = await new PackagePreparer({ root: ws, env: env() }).prepare({ npm: ["x@1"] });
      const uid = Number(readFileSync(`${seen}.uid`, "utf8"));
      expect(uid).toBeGreaterThan(0);
      expect(Number(readFileSync(`${seen}.gid`, "utf8"))).toBe(uid);
      expect(readFileSync(`${seen}.groups`, "utf8").trim().split(" ").map(Number)).not.toContain(0);
      expect(readFileSync(`${seen}.key`, "utf8")).not.toContain("the-master-key-bytes");
      expect(readFileSync(`${seen}.key`, "utf8")).toContain("DENIED");
      expect(readFileSync(`${seen}.ws`, "utf8")).toContain("DENIED");
      // Copied into the worker's own tree: owned by it, modes reset (the setuid bit is gone).
      const file = join(prepared.dir, "npm", "node_modules", "fake-pkg", "index.js");
      expect(statSync(file).uid).toBe(0);
      expect(statSync(file).mode & 0o7777).toBe(0o755);
      expect(statSync(join(prepared.dir, "npm")).uid).toBe(0);
    },
  );

  it("cuts the installer's output and replaces host paths with placeholders", async () => {
    const ws = join(root, "ws");
    // 100 KB of noise naming the workspaces, the data dir above them and the home dir, then the reason.
    fakeNpm(
      `i=0; while [ $i -lt 1000 ]; do echo "npm http fetch ${ws}/.packages ${root} ${homedir()}/.npmrc $i" >&2; ` +
        `i=$((i+1)); done; echo "npm error 404 Not Found - GET http://127.0.0.1:9/FAIL (in ${ws})" >&2; exit 1`,
    );
    const failure = (await new PackagePreparer({ root: ws, env: env() })
      .prepare({ npm: ["FAIL"] })
      .catch((e: unknown) => e)) as Error;
    expect(failure).toBeInstanceOf(PackagePreparationError);
    expect(failure.message.length).toBeLessThan(1_700);
    expect(failure.message).toMatch(
      /^config\.packages\.npm \(FAIL\) could not be installed: npm exited with 1: … /,
    );
    expect(failure.message).toContain(
      "npm error 404 Not Found - GET http://127.0.0.1:9/FAIL (in <workspaces>)",
    );
    expect(failure.message).toContain("<packages>");
    expect(failure.message).toContain("<data-dir>");
    expect(failure.message).toContain("<home>/.npmrc");
    expect(failure.message).not.toContain(root);
    expect(failure.message).not.toContain(homedir());
  });

  it("the real npm against an unreachable registry: its error is cut and names no host path", async () => {
    const port = await closedPort();
    const ws = join(root, "ws");
    const failure = (await new PackagePreparer({
      root: ws,
      env: {
        PATH: process.env.PATH,
        npm_config_registry: `http://127.0.0.1:${port}/`,
        npm_config_fetch_retries: "0",
        ...WORKER_SECRETS,
      },
    })
      .prepare({ npm: ["awaken-no-such-package@1.0.0"] })
      .catch((e: unknown) => e)) as Error;
    expect(failure).toBeInstanceOf(PackagePreparationError);
    expect(failure.message).toMatch(
      /^config\.packages\.npm \(awaken-no-such-package@1\.0\.0\) could not be installed: npm exited with 1: /,
    );
    expect(failure.message).toMatch(/ECONNREFUSED/);
    expect(failure.message).toContain(`127.0.0.1:${port}`);
    expect(failure.message.length).toBeLessThan(1_700);
    expect(failure.message).not.toContain(tmpdir() === "/" ? "\0" : `${tmpdir()}/`);
    expect(failure.message).not.toContain(root);
    expect(failure.message).not.toMatch(/secret-value/);
    expect(entries()).toEqual([]);
  }, 60_000);
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

  it.skipIf(!SYSTEM_PIP)(
    "pip: a wheel is installed with --target and the none tier's python sees it on PYTHONPATH",
    async () => {
      const wheels = join(root, "wheels");
      mkdirSync(wheels);
      writeWheel(join(wheels, "awaken_fixture-1.0.0-py3-none-any.whl"));
      const ws = join(root, "ws");
      const sandboxes = new TieredSandboxProvider(
        { none: new NoneTierProvider(ws) },
        // No index, only the operator's local wheel directory: nothing may reach the network.
        new PackagePreparer({
          root: ws,
          env: { PATH: SYSTEM_PATH, PIP_NO_INDEX: "1", PIP_FIND_LINKS: wheels },
        }),
      );
      const sandbox = await sandboxes.realize({
        tier: "none",
        sessionId: "s-pip",
        networking: { type: "unrestricted" },
        packages: { pip: ["awaken-fixture==1.0.0"] },
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

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

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
