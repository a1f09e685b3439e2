import { describe, expect, it } from "vitest";
import { resolveEnvironmentConfig } from "../../src/coordinator/environmentConfig.js";
import { admitSandboxTier } from "../../src/coordinator/sandboxTierPolicy.js";
import {
  allowedContainerImages,
  imageAdmissionProblem,
  imageReferenceProblem,
  isDigestReference,
} from "../../src/kernel/containerImages.js";

const DIGEST = `localhost/awaken-base@sha256:${"a".repeat(64)}`;

describe("container image references", () => {
  it("accepts tags and digests, with or without a registry host and port", () => {
    for (const reference of [
      "localhost/awaken-base:1",
      "127.0.0.1:5000/team/base:2024.1",
      "registry.example/base",
      DIGEST,
      `registry.example:443/base:1@sha256:${"0".repeat(64)}`,
    ]) {
      expect(imageReferenceProblem(reference), reference).toBeNull();
    }
    expect(isDigestReference(DIGEST)).toBe(true);
    expect(isDigestReference("localhost/awaken-base:1")).toBe(false);
  });

  it("refuses anything podman could read as an option, or that is not one reference", () => {
    for (const reference of [
      "",
      "-v",
      "--privileged",
      "localhost/base:1 --privileged",
      "Localhost/Upper:1",
      "base:1;rm -rf /",
      "base:1\n",
      `base@sha256:${"a".repeat(63)}`,
      `base@sha512:${"a".repeat(64)}`,
      "a".repeat(300),
    ]) {
      expect(imageReferenceProblem(reference), JSON.stringify(reference)).not.toBeNull();
    }
  });

  it("admits only references on the operator's list, which must be well-formed itself", () => {
    const allowed = allowedContainerImages({
      AWAKEN_ALLOWED_CONTAINER_IMAGES: ` localhost/a:1 , ${DIGEST},`,
    });
    expect(allowed).toEqual(["localhost/a:1", DIGEST]);
    expect(imageAdmissionProblem("localhost/a:1", allowed)).toBeNull();
    expect(imageAdmissionProblem("localhost/b:1", allowed)).toMatch(/not on this server's allow-list/);
    expect(imageAdmissionProblem(undefined, allowed)).toMatch(/needs config.sandbox.image/);
    expect(() => allowedContainerImages({ AWAKEN_ALLOWED_CONTAINER_IMAGES: "--privileged" })).toThrow(
      /allowed container image/,
    );
    expect(allowedContainerImages({})).toEqual([]);
  });

  it("freezes the image in the config, only with the container tier, and admission checks the list", () => {
    const config = resolveEnvironmentConfig({
      type: "cloud",
      sandbox: { tier: "container", image: DIGEST },
    });
    expect(config).toMatchObject({ sandbox: { tier: "container", image: DIGEST } });
    expect(() =>
      admitSandboxTier(config, { allowWeakerTiers: false, allowedContainerImages: [DIGEST] }, "x"),
    ).not.toThrow();
    expect(() => admitSandboxTier(config, { allowWeakerTiers: true }, "x")).toThrow(/allow-list/);
    expect(() =>
      resolveEnvironmentConfig({ type: "cloud", sandbox: { tier: "bwrap", image: DIGEST } }),
    ).toThrow(/only for the "container" tier/);
  });
});
