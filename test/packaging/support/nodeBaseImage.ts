/**
 * A base image made from this machine's own Node 24 (no registry needed): the binary, the shared
 * libraries it links, and the passwd/group entries the Dockerfile's `USER node` relies on, laid
 * out as in the official images (/usr/local/bin/node, user node = 1000:1000).
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { must } from "./podman.js";

/**
 * The Node the tests run on: Node 24 from .ci/node in CI (.ci/run). The image is for Node 24, the
 * line the prebuilt context's node_modules was installed with.
 */
export function hostNode24(): string {
  if (!process.versions.node.startsWith("24.")) {
    throw new Error(`the container image test makes its base from Node 24; it runs on ${process.version}`);
  }
  return process.execPath;
}

/** The absolute paths of the shared libraries `binary` loads, as `ldd` resolves them. */
function sharedLibraries(binary: string): string[] {
  const listing = execFileSync("ldd", [binary], { encoding: "utf8" });
  return [...listing.matchAll(/(\/\S+\.so[.\d]*)\s+\(/g)].map((match) => match[1]!);
}

/**
 * Imports the base image as `tag`, labelled `label` (a key=value): every image built on it, each
 * cached layer too, inherits the label, so the caller can remove them all.
 */
export function importNodeBaseImage(tag: string, label: string): string {
  const root = mkdtempSync(join(tmpdir(), "awaken-base-"));
  try {
    const place = (from: string, to: string) => {
      mkdirSync(join(root, dirname(to)), { recursive: true });
      copyFileSync(from, join(root, to));
    };
    const node = hostNode24();
    place(node, "/usr/local/bin/node");
    for (const library of sharedLibraries(node)) place(library, library);
    mkdirSync(join(root, "etc"), { recursive: true });
    mkdirSync(join(root, "tmp"), { recursive: true, mode: 0o1777 });
    mkdirSync(join(root, "home/node"), { recursive: true });
    writeFileSync(
      join(root, "etc/passwd"),
      "root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000::/home/node:/sbin/nologin\n",
    );
    writeFileSync(join(root, "etc/group"), "root:x:0:\nnode:x:1000:\n");
    execFileSync("chown", ["-R", "1000:1000", join(root, "home/node")]);
    execFileSync("chmod", ["1777", join(root, "tmp")]);
    const tar = execFileSync("tar", ["-C", root, "-c", "."], { maxBuffer: 1024 * 1024 * 1024 });
    const changes = ["--change", "ENV PATH=/usr/local/bin:/usr/bin:/bin", "--change", `LABEL ${label}`];
    must("podman", ["import", ...changes, "-", tag], tar);
    return tag;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
