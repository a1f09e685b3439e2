/**
 * The build context of a derived image: the base image plus the frozen resolution, installed inside
 * the build (npm ci from the lockfile, scripts off; pip with --require-hashes). The base must carry
 * the managers it needs (npm, pip); a base without them fails the build with the installer's error.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type PackageResolution, packageResolutionProblem } from "../../kernel/packageResolution.js";

/** Where the packages live in the image; on PATH/NODE_PATH for the sandbox's commands. */
export const IMAGE_PACKAGES_DIR = "/opt/awaken/packages";

/** Writes Containerfile and the frozen files into `dir`; throws on a resolution that fails its checks. */
export function writeBuildContext(dir: string, baseImage: string, resolution: unknown): void {
  const problem = packageResolutionProblem(resolution);
  if (problem !== null) throw new Error(`the frozen resolution cannot be built: ${problem}`);
  const r = resolution as PackageResolution;
  mkdirSync(dir, { recursive: true });
  const lines = [`FROM ${baseImage}`];
  if (r.npm !== null) {
    const root = (r.npm.lockfile.packages[""] ?? {}) as Record<string, unknown>;
    const manifest = {
      name: "awaken-environment",
      version: "1.0.0",
      private: true,
      dependencies: root.dependencies ?? {},
    };
    writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
    writeFileSync(
      join(dir, "package-lock.json"),
      JSON.stringify({ ...r.npm.lockfile, name: manifest.name, version: manifest.version }, null, 2),
    );
    lines.push(
      `COPY package.json package-lock.json ${IMAGE_PACKAGES_DIR}/`,
      `RUN cd ${IMAGE_PACKAGES_DIR} && npm ci --ignore-scripts --no-audit --no-fund`,
      `ENV NODE_PATH=${IMAGE_PACKAGES_DIR}/node_modules PATH=${IMAGE_PACKAGES_DIR}/node_modules/.bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
    );
  }
  if (r.pip !== null) {
    writeFileSync(join(dir, "requirements.txt"), `${r.pip.requirements.join("\n")}\n`);
    lines.push(
      `COPY requirements.txt ${IMAGE_PACKAGES_DIR}/requirements.txt`,
      `RUN pip install --no-deps --require-hashes -r ${IMAGE_PACKAGES_DIR}/requirements.txt`,
    );
  }
  lines.push(`LABEL io.awaken.resolution=${r.id}`);
  writeFileSync(join(dir, "Containerfile"), `${lines.join("\n")}\n`);
}
