import { describe, expect, it } from "vitest";
import { isTunnelHost, tunnelAddressOf } from "../../src/kernel/tunnelDomains.js";

describe("the tunnel name space", () => {
  const domain = "abc123.tunnels.awaken.invalid";

  it("a subdomain of a tunnel's domain names the tunnel and the route", () => {
    expect(tunnelAddressOf(`docs.${domain}`)).toEqual({ domain, route: "docs" });
    expect(tunnelAddressOf(`a.b.${domain.toUpperCase()}.`)).toEqual({ domain, route: "a.b" });
  });

  it("the domain itself, the suffix, look-alikes and other hosts name no tunnel", () => {
    for (const host of [domain, "tunnels.awaken.invalid", `docs.${domain}.evil.com`, "example.com"])
      expect(tunnelAddressOf(host), host).toBeNull();
    expect(tunnelAddressOf(`.${domain}`)).toBeNull();
    expect(tunnelAddressOf(`a..${domain}`)).toBeNull();
  });

  it("every host in the name space is kept from the resolver, even one naming no tunnel", () => {
    expect(isTunnelHost(domain)).toBe(true);
    expect(isTunnelHost("tunnels.awaken.invalid")).toBe(true);
    expect(isTunnelHost("xtunnels.awaken.invalid")).toBe(false);
    expect(isTunnelHost("example.com")).toBe(false);
  });
});
