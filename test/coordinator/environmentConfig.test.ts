import { describe, expect, it } from "vitest";
import {
  applyEnvironmentConfigUpdate,
  type EnvironmentConfig,
  resolveEnvironmentConfig,
  sandboxTierOf,
} from "../../src/coordinator/environmentConfig.js";
import { AwakenError } from "../../src/kernel/errors.js";

const emptyPackages = { type: "packages", apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };

function rejection(fn: () => unknown): AwakenError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AwakenError);
    return err as AwakenError;
  }
  throw new Error("expected an AwakenError");
}

describe("resolveEnvironmentConfig", () => {
  it("an omitted or null config is cloud with unrestricted networking and empty package lists", () => {
    const expected = {
      type: "cloud",
      networking: { type: "unrestricted" },
      packages: emptyPackages,
      sandbox: { tier: "bwrap", provisioning: "on_tool_use" },
    };
    expect(resolveEnvironmentConfig(undefined)).toEqual(expected);
    expect(resolveEnvironmentConfig(null)).toEqual(expected);
    expect(resolveEnvironmentConfig({ type: "cloud" })).toEqual(expected);
  });

  it("limited networking fills unset fields with the creation defaults", () => {
    expect(
      resolveEnvironmentConfig({ type: "cloud", networking: { type: "limited", allowed_hosts: null } }),
    ).toEqual({
      type: "cloud",
      networking: {
        type: "limited",
        allowed_hosts: [],
        allow_mcp_servers: false,
        allow_package_managers: false,
      },
      packages: emptyPackages,
      sandbox: { tier: "bwrap", provisioning: "on_tool_use" },
    });
  });

  it("partial package lists are completed with empty lists", () => {
    const config = resolveEnvironmentConfig({
      type: "cloud",
      packages: { pip: ["requests==2.0"], npm: null },
    });
    expect(config).toMatchObject({ packages: { ...emptyPackages, pip: ["requests==2.0"] } });
  });

  it("self_hosted carries no other fields", () => {
    expect(resolveEnvironmentConfig({ type: "self_hosted" })).toEqual({ type: "self_hosted" });
  });

  it("packages under limited networking require allow_package_managers: true", () => {
    const err = rejection(() =>
      resolveEnvironmentConfig({
        type: "cloud",
        networking: { type: "limited" },
        packages: { apt: ["curl"] },
      }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.message).toMatch(/config\.networking\.allow_package_managers must be true .*\(apt\)/);
  });

  it("limited networking with empty package lists needs no package managers", () => {
    expect(() =>
      resolveEnvironmentConfig({ type: "cloud", networking: { type: "limited" }, packages: { apt: [] } }),
    ).not.toThrow();
  });

  it("limited networking with allow_package_managers accepts packages", () => {
    const config = resolveEnvironmentConfig({
      type: "cloud",
      networking: { type: "limited", allow_package_managers: true, allowed_hosts: ["api.example.com"] },
      packages: { pip: ["numpy"] },
    });
    expect(config).toMatchObject({
      networking: { allow_package_managers: true, allowed_hosts: ["api.example.com"] },
    });
  });
});

describe("applyEnvironmentConfigUpdate", () => {
  const current: EnvironmentConfig = resolveEnvironmentConfig({
    type: "cloud",
    networking: {
      type: "limited",
      allowed_hosts: ["a.example.com"],
      allow_mcp_servers: true,
      allow_package_managers: true,
    },
    packages: { pip: ["numpy"], apt: ["curl"] },
  });

  it("an omitted config keeps the current one (as a copy)", () => {
    const next = applyEnvironmentConfigUpdate(current, undefined);
    expect(next).toEqual(current);
    expect(next).not.toBe(current);
    expect(applyEnvironmentConfigUpdate(current, null)).toEqual(current);
  });

  it("changing the config type fails with invalid_config_type_change", () => {
    const err = rejection(() => applyEnvironmentConfigUpdate(current, { type: "self_hosted" }));
    expect(err.code).toBe("invalid_config_type_change");
    expect(err.message).toMatch(/config\.type cannot change from "cloud" to "self_hosted"/);
    const back = rejection(() => applyEnvironmentConfigUpdate({ type: "self_hosted" }, { type: "cloud" }));
    expect(back.code).toBe("invalid_config_type_change");
  });

  it("fields the update omits keep their current values", () => {
    expect(applyEnvironmentConfigUpdate(current, { type: "cloud" })).toEqual(current);
    const next = applyEnvironmentConfigUpdate(current, {
      type: "cloud",
      networking: { type: "limited", allowed_hosts: ["b.example.com"] },
      packages: { npm: ["left-pad"], pip: null },
    });
    expect(next).toEqual({
      type: "cloud",
      networking: {
        type: "limited",
        allowed_hosts: ["b.example.com"],
        allow_mcp_servers: true,
        allow_package_managers: true,
      },
      packages: { ...emptyPackages, pip: ["numpy"], apt: ["curl"], npm: ["left-pad"] },
      sandbox: { tier: "bwrap", provisioning: "on_tool_use" },
    });
  });

  it("the sandbox tier (Awaken extension) defaults to bwrap, is kept when omitted and changes when given", () => {
    const none = applyEnvironmentConfigUpdate(current, { type: "cloud", sandbox: { tier: "none" } });
    expect(none).toMatchObject({ sandbox: { tier: "none" } });
    expect(applyEnvironmentConfigUpdate(none, { type: "cloud", sandbox: null })).toMatchObject({
      sandbox: { tier: "none" },
    });
    expect(applyEnvironmentConfigUpdate(none, { type: "cloud", sandbox: {} })).toMatchObject({
      sandbox: { tier: "none" },
    });
    // A revision stored before the field existed reads as the default tier.
    const legacy = { type: "cloud", networking: { type: "unrestricted" }, packages: emptyPackages };
    expect(sandboxTierOf(legacy as EnvironmentConfig)).toBe("bwrap");
    expect(sandboxTierOf({ type: "self_hosted" })).toBeNull();
  });

  it("switching to unrestricted drops the limited fields; switching back starts from creation defaults", () => {
    const open = applyEnvironmentConfigUpdate(current, {
      type: "cloud",
      networking: { type: "unrestricted" },
    });
    expect(open).toMatchObject({ networking: { type: "unrestricted" } });
    const err = rejection(() =>
      applyEnvironmentConfigUpdate(open, { type: "cloud", networking: { type: "limited" } }),
    );
    expect(err.message).toMatch(/allow_package_managers must be true/);
  });

  it("turning off package managers while packages remain is rejected", () => {
    const err = rejection(() =>
      applyEnvironmentConfigUpdate(current, {
        type: "cloud",
        networking: { type: "limited", allow_package_managers: false },
      }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.message).toMatch(/\(apt, pip\)/);
  });

  it("a self_hosted update keeps self_hosted", () => {
    expect(applyEnvironmentConfigUpdate({ type: "self_hosted" }, { type: "self_hosted" })).toEqual({
      type: "self_hosted",
    });
  });

  it("does not mutate the current config", () => {
    const snapshot = structuredClone(current);
    const next = applyEnvironmentConfigUpdate(current, { type: "cloud" });
    if (next.type === "cloud") next.packages.pip.push("x");
    expect(current).toEqual(snapshot);
  });
});

describe("package requirements in environment configs", () => {
  const cloud: EnvironmentConfig = resolveEnvironmentConfig({
    type: "cloud",
    packages: { npm: ["lodash@4"] },
  });

  it("create refuses an npm option, path or tarball with invalid_request naming the entry", () => {
    const err = rejection(() =>
      resolveEnvironmentConfig({
        type: "cloud",
        packages: { npm: ["lodash", "--ignore-scripts=false", "/path/evil-1.0.0.tgz"] },
      }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.message).toMatch(
      /^config\.packages\.npm\[1\]: "--ignore-scripts=false" is not a package requirement \(expected name or name@version-range/,
    );
  });

  it("create refuses a pip requirements-file option, naming the entry", () => {
    const err = rejection(() =>
      resolveEnvironmentConfig({ type: "cloud", packages: { pip: ["--no-index", "-r", "/d/master.key"] } }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.message).toMatch(/^config\.packages\.pip\[0\]: "--no-index" is not a package requirement/);
  });

  it("update refuses a bad entry in a new list", () => {
    const err = rejection(() =>
      applyEnvironmentConfigUpdate(cloud, { type: "cloud", packages: { pip: ["requests", "file:///x"] } }),
    );
    expect(err.code).toBe("invalid_request");
    expect(err.message).toMatch(/^config\.packages\.pip\[1\]: "file:\/\/\/x" is not a package requirement/);
  });

  it("update refuses a stored bad entry it would carry into the new revision", () => {
    const stored = structuredClone(cloud);
    if (stored.type === "cloud") stored.packages.npm = ["./evil"];
    const err = rejection(() => applyEnvironmentConfigUpdate(stored, { type: "cloud", sandbox: {} }));
    expect(err.message).toMatch(/^config\.packages\.npm\[0\]: "\.\/evil"/);
  });

  it("accepts registry requirements on create and update", () => {
    const next = applyEnvironmentConfigUpdate(cloud, {
      type: "cloud",
      packages: { pip: ["requests[socks]>=2.31,<3"], npm: ["@types/node@^24", "lodash"] },
    });
    expect(next).toMatchObject({
      packages: { pip: ["requests[socks]>=2.31,<3"], npm: ["@types/node@^24", "lodash"] },
    });
  });
});
