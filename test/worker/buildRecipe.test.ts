/**
 * The derived image's build context and the Coordinator's checks on what a build worker reports:
 * the context installs exactly the frozen files (npm ci with scripts off, pip with hashes); a
 * resolution that fails its own checks is never built; only revisions on the container tier with a
 * base and packages derive an image; a ready settle must name a reference pinned to its digest.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { derivedImageBase, ImageBuildService } from "../../src/coordinator/imageBuilds/imageBuildService.js";
import type { ImageBuildStore } from "../../src/coordinator/imageBuilds/ports.js";
import { imageBuildId, imageBuildKey, logTail, recipeDigest } from "../../src/kernel/imageBuild.js";
import { packageResolution } from "../../src/kernel/packageResolution.js";
import { writeBuildContext } from "../../src/worker/build/buildRecipe.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const resolution = packageResolution({
  format: 1,
  npm: {
    lockfile: {
      lockfileVersion: 3,
      packages: {
        "": { dependencies: { left: "1.0.0" } },
        "node_modules/left": {
          version: "1.0.0",
          resolved: "http://r.test/left-1.0.0.tgz",
          integrity: "sha512-AAAA",
        },
      },
    },
  },
  pip: { requirements: [`six==1.16.0 --hash=sha256:${"a".repeat(64)}`] },
  unfrozen: [],
});

describe("the build recipe", () => {
  it("writes the frozen lockfile and hashed requirements, installed with scripts off and hashes required", () => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-recipe-"));
    dirs.push(dir);
    writeBuildContext(dir, "localhost/base:1", resolution);
    const containerfile = readFileSync(join(dir, "Containerfile"), "utf8");
    expect(containerfile).toMatch(/^FROM localhost\/base:1\n/);
    expect(containerfile).toContain("npm ci --ignore-scripts");
    expect(containerfile).toContain("--require-hashes");
    expect(
      JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")).packages["node_modules/left"],
    ).toMatchObject({ version: "1.0.0", integrity: "sha512-AAAA" });
    expect(readFileSync(join(dir, "requirements.txt"), "utf8")).toContain("six==1.16.0 --hash=sha256:");
  });

  it("refuses a resolution whose content does not match its id (never built)", () => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-recipe-"));
    dirs.push(dir);
    const tampered = {
      ...resolution,
      pip: { requirements: [`six==1.17.0 --hash=sha256:${"a".repeat(64)}`] },
    };
    expect(() => writeBuildContext(dir, "localhost/base:1", tampered)).toThrow(/does not match its content/);
  });

  it("keys builds by base, resolution and recipe; keeps a log's last lines", () => {
    const a = imageBuildKey("localhost/base:1", resolution.id);
    expect(a.recipeDigest).toBe(recipeDigest());
    expect(imageBuildId(a)).toBe(imageBuildId(imageBuildKey("localhost/base:1", resolution.id)));
    expect(imageBuildId(a)).not.toBe(imageBuildId(imageBuildKey("localhost/base:2", resolution.id)));
    expect(imageBuildId(a)).not.toBe(imageBuildId({ ...a, recipeDigest: recipeDigest({ format: 2 }) }));
    expect(logTail(`${"x".repeat(50)}\nlast line\n`, 20)).toBe("last line\n");
  });
});

describe("which revisions derive an image", () => {
  const packages = { type: "packages", apt: [], cargo: [], gem: [], go: [], npm: ["left@1"], pip: [] };
  const cloud = (sandbox: object, npm = ["left@1"]) =>
    ({
      type: "cloud",
      networking: { type: "unrestricted" },
      packages: { ...packages, npm },
      sandbox,
    }) as never;
  it("only the container tier with a base and packages", () => {
    expect(derivedImageBase(cloud({ tier: "container", image: "localhost/base:1" }))).toBe(
      "localhost/base:1",
    );
    expect(derivedImageBase(cloud({ tier: "container", image: "localhost/base:1" }, []))).toBeNull();
    expect(derivedImageBase(cloud({ tier: "bwrap" }))).toBeNull();
  });
});

describe("what a build worker may report", () => {
  const store = {
    settle: async () => ({ refused: "unused" }),
  } as unknown as ImageBuildStore;
  const service = new ImageBuildService(store, { now: () => 0 });
  const lease = { buildId: `imgbuild_${"0".repeat(32)}`, owner: "w", epoch: 1 };
  const digest = `sha256:${"e".repeat(64)}`;
  it("a ready settle names a reference pinned to that digest", async () => {
    await expect(
      service.settle(lease, {
        kind: "ready",
        digest,
        imageReference: "127.0.0.1:5000/x:latest",
        logTail: "",
      }),
    ).rejects.toThrow(/pinned to its digest/);
    await expect(
      service.settle(lease, {
        kind: "ready",
        digest,
        imageReference: `127.0.0.1:5000/x@sha256:${"f".repeat(64)}`,
        logTail: "",
      }),
    ).rejects.toThrow(/pinned to its digest/);
    // Well formed, then the store's fence decides (here: refused).
    await expect(
      service.settle(lease, {
        kind: "ready",
        digest,
        imageReference: `127.0.0.1:5000/x@${digest}`,
        logTail: "",
      }),
    ).rejects.toThrow(/stale image build lease/);
  });
});
