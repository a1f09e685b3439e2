import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../../src/kernel/addressPolicy.js";
import { InvalidAllowListEntry, OutboundPolicy } from "../../src/kernel/outboundPolicy.js";

/** The hostname a WHATWG URL parser (fetch's, the MCP SDK's) makes of `url`, brackets removed. */
function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, "");
}

describe("public address policy (sandbox egress and host-made connections alike)", () => {
  it("refuses loopback, link-local, metadata, private, unspecified and embedded forms", () => {
    for (const address of [
      "127.0.0.1",
      "127.9.9.9",
      "0.0.0.0",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "169.254.1.1",
      "100.64.0.1",
      "100.127.255.254",
      "192.0.0.8",
      "192.0.2.1",
      "198.18.0.1",
      "198.51.100.7",
      "203.0.113.9",
      "224.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "fe80::1",
      "fd00::1",
      "fdff:ffff::1",
      "fc00::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::ffff:10.0.0.1",
      "::ffff:0:127.0.0.1",
      "::127.0.0.1",
      "64:ff9b::7f00:1",
      "64:ff9b:1::808:808",
      "2002:7f00:1::",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2",
      "2001:db8::1",
      "100::1",
      "fe80::1%eth0",
      "not-an-ip",
      "",
    ]) {
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    }
  });

  it("lets public addresses through", () => {
    for (const address of [
      "93.184.216.34",
      "8.8.8.8",
      "172.32.0.1",
      "100.128.0.1",
      "2606:4700::1111",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ]) {
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
    }
  });

  it("decimal, octal, hex and short IPv4 forms are the loopback once a URL parser read them", () => {
    for (const url of [
      "http://2130706433/",
      "http://0177.0.0.1/",
      "http://0x7f.0.0.1/",
      "http://0x7f000001/",
      "http://127.1/",
      "http://017700000001/",
      "http://[::ffff:127.0.0.1]/",
      "http://[0:0:0:0:0:ffff:7f00:1]/",
      "http://0/",
      "http://169.254.43518/",
    ]) {
      const host = hostOf(url);
      expect([url, host, isPublicAddress(host)]).toEqual([url, host, false]);
    }
  });
});

describe("the operator's allow-list of private hosts", () => {
  it("by default only public addresses are allowed, the loopback never", () => {
    const policy = OutboundPolicy.publicOnly();
    expect(policy.allows("example.com", "93.184.216.34")).toBe(true);
    expect(policy.allows("localhost", "127.0.0.1")).toBe(false);
    expect(policy.allows("127.0.0.1", "127.0.0.1")).toBe(false);
    expect(policy.allows("metadata", "169.254.169.254")).toBe(false);
    expect(OutboundPolicy.allowing(undefined).allowsPrivate).toBe(false);
    expect(OutboundPolicy.allowing(" , ").allows("localhost", "::1")).toBe(false);
  });

  it("allows the hostnames, addresses and CIDR ranges it lists, and nothing next to them", () => {
    const policy = OutboundPolicy.allowing("10.0.0.5, MCP.Internal. 192.168.8.0/22,fd00:1::/32");
    expect(policy.allowsPrivate).toBe(true);
    expect(policy.allows("10.0.0.5", "10.0.0.5")).toBe(true);
    expect(policy.allows("10.0.0.5", "::ffff:10.0.0.5")).toBe(true);
    expect(policy.allows("10.0.0.6", "10.0.0.6")).toBe(false);
    // A listed name, whatever it resolves to; another name to the same address is not listed.
    expect(policy.allows("mcp.internal", "10.9.9.9")).toBe(true);
    expect(policy.allows("mcp.internal.", "127.0.0.1")).toBe(true);
    expect(policy.allows("other.internal", "10.9.9.9")).toBe(false);
    expect(policy.allows("x.mcp.internal", "10.9.9.9")).toBe(false);
    expect(policy.allows("h", "192.168.8.1")).toBe(true);
    expect(policy.allows("h", "192.168.11.255")).toBe(true);
    expect(policy.allows("h", "192.168.12.0")).toBe(false);
    expect(policy.allows("h", "fd00:1:ffff::1")).toBe(true);
    expect(policy.allows("h", "fd00:2::1")).toBe(false);
    expect(policy.allows("h", "127.0.0.1")).toBe(false);
  });

  it("allows the loopback only when listed, v4 and v6 apart", () => {
    const v4 = OutboundPolicy.allowing("127.0.0.1");
    expect(v4.allows("127.0.0.1", "127.0.0.1")).toBe(true);
    expect(v4.allows("localhost", "127.0.0.2")).toBe(false);
    expect(v4.allows("localhost", "::1")).toBe(false);
    const both = OutboundPolicy.allowing("127.0.0.0/8,::1");
    expect(both.allows("localhost", "127.0.0.2")).toBe(true);
    expect(both.allows("localhost", "::1")).toBe(true);
    expect(both.allows("h", "::ffff:127.0.0.3")).toBe(true);
    expect(both.allows("h", "10.0.0.1")).toBe(false);
  });

  it("refuses an entry that is neither a host nor an address, naming it", () => {
    for (const entry of [
      "10.0.0.0/33",
      "::1/129",
      "http://x",
      "a b/c",
      "1.2.3",
      "-bad-.example",
      "10.0.0.0/x",
    ]) {
      expect(() => OutboundPolicy.allowing(entry), entry).toThrow(InvalidAllowListEntry);
    }
    expect(() => OutboundPolicy.allowing("ok.example,http://x")).toThrow(/"http:\/\/x"/);
  });
});
