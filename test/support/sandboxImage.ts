/**
 * A tiny image for the container sandbox tier, made here (no registry is reachable): the host's
 * bash, perl (with perl-base's modules, which the supervisor needs) and a few coreutils with their
 * libraries, plus an `/etc/os-release` and a marker file no host has, imported with `podman import`.
 * `remove` deletes the image and every container of ours left from it.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";

const RUNC = "/usr/sbin/runc";
/** Label on the image (and so on every container made from it): the test run's scratch dir's name. */
export const TEST_RUN_LABEL = "io.awaken.test-run";
export const SANDBOX_IMAGE_MARKER = "awaken-container-tier-test-image";
const TOOLS = [
  "bash",
  "sh",
  "perl",
  "cat",
  "ls",
  "id",
  "env",
  "touch",
  "mkdir",
  "head",
  "sleep",
  "tr",
  "rm",
  "echo",
  "mv",
  "true",
  "unshare",
  "mount",
  "wc",
];

function which(tool: string): string {
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    if (existsSync(join(dir, tool))) return join(dir, tool);
  }
  throw new Error(`${tool} is not installed on this host`);
}

/** The shared libraries `binary` loads (ldd's resolved paths). */
function librariesOf(binary: string): string[] {
  const out = spawnSync("ldd", [binary], { encoding: "utf8" }).stdout ?? "";
  return [...out.matchAll(/(\/\S+\.so[^\s]*)/g)].map((match) => match[1]!);
}

export interface SandboxImage {
  reference: string;
  remove(): void;
}

export function podmanMissing(): string | null {
  const result = spawnSync("sh", ["-c", "command -v podman"], { encoding: "utf8" });
  if (result.status !== 0) return "podman is not installed (apt-get install podman runc; .ci/run does it)";
  return null;
}

/**
 * `withNode`: also node (this process's binary) and the host's npm, so an image build can run
 * `npm ci` inside the image (the image-build tests' base). `storageArgs`: podman's global options
 * naming another store than the default (test/support/podmanStore.ts) to import it into.
 */
export function buildSandboxImage(
  options: { withNode?: boolean; storageArgs?: readonly string[] } = {},
): SandboxImage {
  const store = options.storageArgs ?? [];
  const reference = `localhost/awaken-sandbox-test-${randomUUID().slice(0, 8)}:1`;
  const root = mkdtempSync(join(tmpdir(), "sandbox-image-"));
  try {
    for (const dir of [
      "usr/bin",
      "usr/lib/x86_64-linux-gnu",
      "usr/lib/aarch64-linux-gnu",
      "lib64",
      "etc",
      "tmp",
      "workspace",
    ])
      mkdirSync(join(root, dir), { recursive: true });
    symlinkSync("usr/bin", join(root, "bin"));
    symlinkSync("usr/lib", join(root, "lib"));
    const libraries = new Set<string>();
    for (const tool of TOOLS) {
      const path = realpathSync(which(tool));
      cpSync(path, join(root, "usr/bin", tool), { dereference: true });
      for (const library of librariesOf(path)) libraries.add(library);
    }
    if (options.withNode) {
      cpSync(process.execPath, join(root, "usr/bin/node"), { dereference: true });
      for (const library of librariesOf(process.execPath)) libraries.add(library);
      const npm = "/usr/lib/node_modules/npm";
      cpSync(realpathSync(npm), join(root, npm), { recursive: true, dereference: true });
      writeFileSync(join(root, "usr/bin/npm"), `#!/bin/sh\nexec /usr/bin/node ${npm}/bin/npm-cli.js "$@"\n`, {
        mode: 0o755,
      });
      mkdirSync(join(root, "root"), { recursive: true });
    }
    for (const library of libraries) {
      // The loader by its usual path; the others where the loader looks by default.
      const target = library.includes("ld-linux")
        ? join(root, library.startsWith("/lib64") ? library : join("lib64", basename(library)))
        : join(
            root,
            "usr/lib",
            process.arch === "arm64" ? "aarch64-linux-gnu" : "x86_64-linux-gnu",
            basename(library),
          );
      cpSync(realpathSync(library), target, { dereference: true });
    }
    const perlBase = `/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu/perl-base`;
    cpSync(perlBase, join(root, perlBase), { recursive: true, dereference: true });
    writeFileSync(join(root, "etc/os-release"), `ID=${SANDBOX_IMAGE_MARKER}\nNAME="Awaken test image"\n`);
    writeFileSync(join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n");
    writeFileSync(join(root, SANDBOX_IMAGE_MARKER), "baked into the image\n");
    const tar = execFileSync("tar", ["-C", root, "-c", "."], { maxBuffer: 512 * 2 ** 20 });
    const change = ["--change", `LABEL ${TEST_RUN_LABEL}=${basename(tmpdir())}`];
    execFileSync("podman", [...store, "--runtime", RUNC, "import", ...change, "-", reference], {
      input: tar,
      stdio: ["pipe", "ignore", "pipe"],
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return {
    reference,
    remove() {
      const ids = spawnSync(
        "podman",
        [...store, "ps", "--all", "--quiet", "--filter", `ancestor=${reference}`],
        { encoding: "utf8" },
      ).stdout.trim();
      if (ids)
        spawnSync("podman", [
          ...store,
          "--runtime",
          RUNC,
          "rm",
          "--force",
          "--time",
          "0",
          ...ids.split(/\s+/),
        ]);
      spawnSync("podman", [...store, "rmi", "--force", "--ignore", reference]);
    },
  };
}
