/**
 * Which addresses a host-made connection on a user's behalf may reach: public ones
 * (`isPublicAddress`), plus what the operator put on the allow-list of private hosts (exact
 * hostnames, IP addresses or CIDR ranges), e.g. an MCP server on the company network. The default,
 * an empty list, refuses every loopback, link-local, private and reserved address.
 */

import { isIP } from "node:net";
import { addressBytes, isPublicAddress } from "./addressPolicy.js";

/** Where an operator sets the allow-list; named in every refusal so the fix is one step away. */
export const ALLOW_PRIVATE_HOSTS_HINT =
  "an operator can allow private hosts with --allow-private-mcp-host or AWAKEN_ALLOW_PRIVATE_HOSTS";

/** An allow-list entry that is neither a hostname nor an address / CIDR range. */
export class InvalidAllowListEntry extends Error {}

interface Cidr {
  bytes: number[];
  prefix: number;
}

const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Lower case, without a trailing dot or IPv6 brackets: how hosts are compared. */
export function canonicalHost(host: string): string {
  const lower = host.trim().toLowerCase().replace(/\.$/, "");
  return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

function parseCidr(entry: string): Cidr | null {
  const slash = entry.indexOf("/");
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const bytes = addressBytes(canonicalHost(address));
  if (!bytes) return null;
  const max = bytes.length * 8;
  // An IPv6 prefix over an IPv4-mapped range counts from the mapped part.
  const offset = isIP(canonicalHost(address)) === 6 && bytes.length === 4 ? 96 : 0;
  if (slash === -1) return { bytes, prefix: max };
  const text = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(text)) return null;
  const prefix = Number(text) - offset;
  if (prefix < 0 || prefix > max) return null;
  return { bytes, prefix };
}

function inCidr(bytes: readonly number[], cidr: Cidr): boolean {
  if (bytes.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((bytes[i] ?? 0) & mask) !== ((cidr.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

export class OutboundPolicy {
  private constructor(
    private readonly hosts: ReadonlySet<string>,
    private readonly ranges: readonly Cidr[],
  ) {}

  /** Public addresses only: the product's default. */
  static publicOnly(): OutboundPolicy {
    return new OutboundPolicy(new Set(), []);
  }

  /**
   * The operator's allow-list: entries separated by commas or white space, each a hostname (the
   * exact name, whatever it resolves to), an IP address or a CIDR range (`10.0.0.0/8`, `fd00::/8`).
   * Throws `InvalidAllowListEntry` naming the first entry that is neither.
   */
  static allowing(list: string | undefined): OutboundPolicy {
    const hosts = new Set<string>();
    const ranges: Cidr[] = [];
    for (const raw of (list ?? "").split(/[\s,]+/)) {
      const entry = raw.trim();
      if (entry === "") continue;
      const cidr = parseCidr(entry);
      if (cidr) {
        ranges.push(cidr);
        continue;
      }
      const host = canonicalHost(entry);
      if (!HOSTNAME.test(host) || /^[\d.]+$/.test(host)) {
        throw new InvalidAllowListEntry(
          `allow-list entry ${JSON.stringify(entry)} is neither a hostname nor an IP address or CIDR range`,
        );
      }
      hosts.add(host);
    }
    return new OutboundPolicy(hosts, ranges);
  }

  /** Whether the list allows anything beyond public addresses (for the start-up log). */
  get allowsPrivate(): boolean {
    return this.hosts.size > 0 || this.ranges.length > 0;
  }

  /** Whether the operator listed `host` itself: its name, or a literal address inside a listed range. */
  lists(host: string): boolean {
    const name = canonicalHost(host);
    if (this.hosts.has(name)) return true;
    const bytes = addressBytes(name);
    return bytes !== null && this.ranges.some((range) => inCidr(bytes, range));
  }

  /** Whether a connection for `host` (as named in the URL) may go to `address` (one it resolved to). */
  allows(host: string, address: string): boolean {
    if (isPublicAddress(address)) return true;
    if (this.hosts.has(canonicalHost(host))) return true;
    const bytes = addressBytes(address);
    return bytes !== null && this.ranges.some((range) => inCidr(bytes, range));
  }
}
