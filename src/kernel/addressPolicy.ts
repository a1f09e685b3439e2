/**
 * The product's one address policy for connections made on someone else's behalf (a sandbox's
 * egress, the host's MCP connections, OAuth token endpoints, validation probes): only public
 * addresses. Never loopback, link-local (the cloud metadata service 169.254.169.254 among them),
 * private, CGNAT, multicast, unspecified, documentation or reserved, nor an IPv6 form embedding an
 * IPv4 address that is one of those (IPv4-mapped, -compatible, -translated, NAT64, 6to4).
 *
 * Addresses are literal IPs as the resolver or the URL parser gives them: WHATWG URL parsing has
 * already turned `http://2130706433/`, `http://0177.0.0.1/` or `http://0x7f.1/` into `127.0.0.1`.
 */

import { isIP } from "node:net";

/** One address a name resolved to. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export function parseIpv4(address: string): number[] | null {
  const parts = address.split(".");
  if (parts.length !== 4) return null;
  const bytes = parts.map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : Number.NaN));
  return bytes.every((byte) => byte >= 0 && byte <= 255) ? bytes : null;
}

function ipv4Public(address: string): boolean {
  const bytes = parseIpv4(address);
  if (!bytes) return false;
  const [a = 0, b = 0, c = 0] = bytes;
  if (a === 0 || a === 10 || a === 127) return false; // unspecified/"this network", private, loopback
  if (a === 100 && b >= 64 && b <= 127) return false; // CGNAT
  if (a === 169 && b === 254) return false; // link-local, metadata 169.254.169.254
  if (a === 172 && b >= 16 && b <= 31) return false; // private
  if (a === 192 && b === 168) return false; // private
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF protocol assignments, documentation
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // documentation
  if (a === 203 && b === 0 && c === 113) return false; // documentation
  if (a >= 224) return false; // multicast, reserved, broadcast
  return true;
}

/** The 8 groups of an IPv6 address (a trailing dotted IPv4 part included), or null. */
export function parseIpv6(address: string): number[] | null {
  if (address.includes("%")) return null; // scoped (link-local) addresses are never public
  let text = address;
  const lastColon = text.lastIndexOf(":");
  const last = text.slice(lastColon + 1);
  if (last.includes(".")) {
    const v4 = parseIpv4(last);
    if (!v4) return null;
    const [a = 0, b = 0, c = 0, d = 0] = v4;
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const group = (part: string) => (part === "" ? [] : part.split(":"));
  const head = group(halves[0] ?? "");
  const rest = halves.length === 2 ? group(halves[1] ?? "") : [];
  const parse = (parts: string[]) =>
    parts.map((part) => (/^[0-9a-f]{1,4}$/i.test(part) ? Number.parseInt(part, 16) : Number.NaN));
  const headGroups = parse(head);
  const restGroups = parse(rest);
  const total = 8;
  let groups: number[];
  if (halves.length === 2) {
    const fill = total - headGroups.length - restGroups.length;
    if (fill < 0) return null;
    groups = [...headGroups, ...new Array<number>(fill).fill(0), ...restGroups];
  } else {
    groups = [...headGroups, ...restGroups];
  }
  if (groups.length !== total || groups.some((value) => Number.isNaN(value))) return null;
  return groups;
}

function embeddedIpv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/**
 * The IPv4 address an IPv6 address stands for on this host (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`), or null.
 */
export function embeddedHostIpv4(groups: readonly number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  if (g0 !== 0 || g1 !== 0 || g2 !== 0 || g3 !== 0) return null;
  if (g4 === 0 && g5 === 0xffff) return embeddedIpv4(g6, g7); // mapped
  if (g4 === 0xffff && g5 === 0) return embeddedIpv4(g6, g7); // translated
  if (g4 === 0 && g5 === 0 && (g6 !== 0 || g7 > 1)) return embeddedIpv4(g6, g7); // compatible
  return null;
}

function ipv6Public(address: string): boolean {
  const g = parseIpv6(address);
  if (!g) return false;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const host = embeddedHostIpv4(g);
  if (host !== null) return ipv4Public(host);
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return false; // ::, ::1
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return ipv4Public(embeddedIpv4(g6, g7)); // NAT64 well-known prefix
  }
  if (g0 === 0x64 && g1 === 0xff9b) return false; // local-use NAT64 (64:ff9b:1::/48) and the rest
  if (g0 === 0x2002) return ipv4Public(embeddedIpv4(g1, g2)); // 6to4
  if (g0 === 0x2001 && g1 === 0) return false; // Teredo: the IPv4 inside is obfuscated
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return false; // discard-only
  if ((g0 & 0xffc0) === 0xfe80) return false; // link-local
  if ((g0 & 0xffc0) === 0xfec0) return false; // site-local (deprecated)
  if ((g0 & 0xfe00) === 0xfc00) return false; // unique local (fc00::/7, fd00::/8 among them)
  if ((g0 & 0xff00) === 0xff00) return false; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  return true;
}

/** Whether a connection made on someone else's behalf may go to this literal address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return ipv4Public(address);
  if (family === 6) return ipv6Public(address);
  return false;
}

/**
 * An address as bytes for prefix matching: 4 for IPv4 and for an IPv6 form that stands for an
 * IPv4 address (so `10.0.0.0/8` covers `::ffff:10.0.0.5`), 16 otherwise; null if not an address.
 */
export function addressBytes(address: string): number[] | null {
  const family = isIP(address);
  if (family === 4) return parseIpv4(address);
  if (family !== 6) return null;
  const groups = parseIpv6(address);
  if (!groups) return null;
  const v4 = embeddedHostIpv4(groups);
  if (v4 !== null && (groups[5] === 0xffff || groups[4] === 0xffff)) return parseIpv4(v4);
  return groups.flatMap((group) => [group >> 8, group & 0xff]);
}
