import { describe, expect, it } from "vitest";
import type { SandboxSecretVariable } from "../../src/sandbox/ports.js";
import { unusableSecrets } from "../../src/sandbox/secretReach.js";
import {
  credentialAllowsHost,
  headersMention,
  newPlaceholder,
  PLACEHOLDER_PREFIX,
  type Substitution,
  substituteBody,
  substituteHeaders,
  substitutionsFor,
} from "../../src/sandbox/secretSubstitution.js";

/** Pure parts of `environment_variable` substitution: which hosts, which places, the replacing. */

const entry = (
  secretName: string,
  networking: Substitution["networking"],
  injection = { header: true, body: true },
): Substitution => ({ secretName, networking, injection, placeholder: newPlaceholder() });

describe("placeholders", () => {
  it("are random, prefixed tokens, different every time", () => {
    const a = newPlaceholder();
    const b = newPlaceholder();
    expect(a.startsWith(PLACEHOLDER_PREFIX)).toBe(true);
    expect(a).toMatch(/^awaken-secret-[0-9a-f]{32}$/);
    expect(a).not.toBe(b);
  });
});

describe("which credentials a host gets", () => {
  it("limited: exact names and *.domain subdomains (not the apex); unrestricted: any host", () => {
    const limited = entry("API_KEY", { type: "limited", allowed_hosts: ["api.example.com", "*.corp.test"] });
    const open = entry("OPEN_KEY", { type: "unrestricted" });
    expect(credentialAllowsHost(limited, "api.example.com")).toBe(true);
    expect(credentialAllowsHost(limited, "API.example.com.")).toBe(true);
    expect(credentialAllowsHost(limited, "evil.example.com")).toBe(false);
    expect(credentialAllowsHost(limited, "a.corp.test")).toBe(true);
    expect(credentialAllowsHost(limited, "a.b.corp.test")).toBe(true);
    expect(credentialAllowsHost(limited, "corp.test")).toBe(false);
    expect(credentialAllowsHost(limited, "evilcorp.test")).toBe(false);
    expect(substitutionsFor([limited, open], "x.corp.test").map((e) => e.secretName)).toEqual([
      "API_KEY",
      "OPEN_KEY",
    ]);
    expect(substitutionsFor([limited, open], "elsewhere.test").map((e) => e.secretName)).toEqual([
      "OPEN_KEY",
    ]);
  });
});

describe("headers", () => {
  it("replaces the placeholder in every value but the routing headers", () => {
    const p = newPlaceholder();
    const headers = {
      authorization: `Bearer ${p}`,
      "x-both": [`a=${p}`, "b"],
      host: p,
      "content-length": "3",
    };
    expect(headersMention(headers, p)).toBe(true);
    expect(headersMention({ host: p }, p)).toBe(false);
    const out = substituteHeaders(headers, p, "s3cr3t");
    expect(out).toEqual({
      authorization: "Bearer s3cr3t",
      "x-both": ["a=s3cr3t", "b"],
      host: p,
      "content-length": "3",
    });
  });
});

describe("bodies", () => {
  it("replaces every occurrence in a new Buffer, and says so when there is none", () => {
    const p = newPlaceholder();
    const body = Buffer.from(`{"key":"${p}","again":"${p}"}`);
    const out = substituteBody(body, Buffer.from(p), Buffer.from("v"));
    expect(out?.toString()).toBe('{"key":"v","again":"v"}');
    expect(body.toString()).toContain(p);
    expect(substituteBody(Buffer.from("nothing"), Buffer.from(p), Buffer.from("v"))).toBeNull();
  });
});

describe("credentials a sandbox cannot use (static check at realization)", () => {
  const variable = (
    secretName: string,
    networking: SandboxSecretVariable["networking"],
  ): SandboxSecretVariable => ({
    secretName,
    networking,
    injection: { header: true, body: false },
  });
  const limited = (...hosts: string[]) => ({ type: "limited" as const, allowed_hosts: hosts });

  it("a credential whose hosts a limited environment does not allow is reported, with those hosts", () => {
    const found = unusableSecrets(
      [
        variable("OK", limited("api.example.com")),
        variable("WILD_OK", limited("*.example.com")),
        variable("SUB_OK", limited("x.corp.test")),
        variable("WILD_WILD_OK", limited("*.a.corp.test")),
        variable("FORBIDDEN", limited("forbidden.test", "api.example.com")),
        variable("ANY", { type: "unrestricted" }),
      ],
      { tier: "bwrap", networking: limited("api.example.com", "*.corp.test") },
    );
    expect(found.map((f) => f.secretName)).toEqual(["FORBIDDEN"]);
    expect(found[0]?.reason).toContain("forbids forbidden.test,");
    expect(found[0]?.reason).not.toContain("api.example.com");
  });

  it("a name the sandbox keeps for itself (PATH, the proxy or CA variables) or no valid name is never set", () => {
    const vars = [
      variable("PATH", limited("a.test")),
      variable("HTTPS_PROXY", limited("a.test")),
      variable("A-B", limited("a.test")),
    ];
    const found = unusableSecrets(vars, { tier: "bwrap", networking: { type: "unrestricted" } });
    expect(found.map((f) => f.secretName)).toEqual(["PATH", "HTTPS_PROXY", "A-B"]);
    expect(found[0]?.reason).toContain("not a variable name the sandbox can set");
  });

  it("an unrestricted environment forbids nothing; the none tier can inject nothing", () => {
    const vars = [variable("A", limited("a.test")), variable("B", { type: "unrestricted" })];
    expect(unusableSecrets(vars, { tier: "bwrap", networking: { type: "unrestricted" } })).toEqual([]);
    const none = unusableSecrets(vars, { tier: "none", networking: { type: "unrestricted" } });
    expect(none.map((f) => f.secretName)).toEqual(["A", "B"]);
    expect(none[0]?.reason).toContain('"none" sandbox tier has no egress proxy');
  });
});
