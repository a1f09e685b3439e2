/**
 * Every connection the host makes on a user's behalf goes through this: the MCP connections (in
 * process and on remote workers), OAuth token endpoints (holders' refresh and the validation's),
 * the `mcp_oauth_validate` probe, and whatever comes next that dials a URL a user supplied
 * (webhooks: use `fetch` from here, never the global one).
 *
 * Each new connection resolves its host once, checks EVERY resolved address against the
 * `OutboundPolicy`, and connects only to those checked addresses (the resolver's answer is handed
 * to the socket as its lookup, so nothing resolves the name again between check and connect: no
 * DNS rebinding). A literal IP in the URL is checked as it is. This happens in the connection
 * pool's connector, so it holds for every redirect hop too: any hop that opens a connection is
 * checked like the first.
 */

import { lookup as dnsLookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";
import { Agent, buildConnector, fetch as undiciFetch } from "undici";
import type { ResolvedAddress } from "./addressPolicy.js";
import { PlatformError } from "./errors.js";
import { ALLOW_PRIVATE_HOSTS_HINT, canonicalHost, OutboundPolicy } from "./outboundPolicy.js";

export type { ResolvedAddress } from "./addressPolicy.js";

/** A name resolver returning every address (default: the host's, like `dns.lookup` with `all`). */
export type Resolve = (host: string) => Promise<ResolvedAddress[]>;

/** The fetch the MCP SDK and the probes take (a subset of the global one's signature). */
export type OutboundFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** What callers need of a connector: its fetch, and an early check that does not connect. */
export interface Outbound {
  fetch: OutboundFetch;
  /**
   * Resolves and checks `url`'s host without connecting: the refusal, or null. Only for refusing
   * early (before a credential is opened); the connection is checked again when it is made.
   */
  admit(url: string | URL): Promise<OutboundRefused | null>;
}

/** The policy refused a destination. `message` names the host, never what a target answered. */
export class OutboundRefused extends PlatformError {
  constructor(
    readonly host: string,
    /** For logs only: the refused address (a client is told the kind, not the address). */
    readonly address: string,
  ) {
    super(
      "outbound_refused",
      `${host} ${isIP(host) ? "is" : "resolves to"} a loopback, link-local, private or reserved address, ` +
        `which connections made for users may not reach (${ALLOW_PRIVATE_HOSTS_HINT})`,
    );
    this.name = "OutboundRefused";
  }
}

/** The `OutboundRefused` behind an error (fetch wraps connect errors in `cause`), or null. */
export function outboundRefusalOf(error: unknown): OutboundRefused | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current; depth++) {
    if (current instanceof OutboundRefused) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

export interface OutboundConnectorOptions {
  /** Default: public addresses only. */
  policy?: OutboundPolicy;
  /** Default: the host's resolver. Tests inject one to play DNS games. */
  resolve?: Resolve;
  connectTimeoutMs?: number;
}

async function systemResolve(host: string): Promise<ResolvedAddress[]> {
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
}

export class OutboundConnector implements Outbound {
  readonly policy: OutboundPolicy;
  private readonly resolve: Resolve;
  private readonly agent: Agent;

  constructor(options: OutboundConnectorOptions = {}) {
    this.policy = options.policy ?? OutboundPolicy.publicOnly();
    this.resolve = options.resolve ?? systemResolve;
    const base = buildConnector({ lookup: this.lookup, timeout: options.connectTimeoutMs ?? 10_000 });
    this.agent = new Agent({
      connect: (connectOptions, callback) => {
        // A literal IP never reaches `lookup` (the socket skips resolution): check it here.
        const host = canonicalHost(connectOptions.hostname);
        if (isIP(host) !== 0 && !this.policy.allows(host, host)) {
          callback(new OutboundRefused(host, host), null);
          return;
        }
        base(connectOptions, callback);
      },
    });
  }

  readonly fetch: OutboundFetch = (url, init) =>
    undiciFetch(
      url as never,
      { ...(init as object), dispatcher: this.agent } as never,
    ) as unknown as Promise<Response>;

  async admit(url: string | URL): Promise<OutboundRefused | null> {
    let host: string;
    try {
      host = canonicalHost(new URL(url).hostname);
    } catch {
      return null; // not a URL: the fetch reports it
    }
    try {
      await this.checked(host);
      return null;
    } catch (error) {
      if (error instanceof OutboundRefused) return error;
      return null; // not resolvable now: the connection attempt reports it
    }
  }

  /** Closes the pool's kept-alive connections. */
  async close(): Promise<void> {
    await this.agent.close();
  }

  /** Every address of `host`, each allowed by the policy, or throws (`OutboundRefused` for policy). */
  private async checked(host: string): Promise<ResolvedAddress[]> {
    const family = isIP(host);
    const addresses: ResolvedAddress[] =
      family !== 0 ? [{ address: host, family: family === 6 ? 6 : 4 }] : await this.resolve(host);
    if (addresses.length === 0) {
      throw Object.assign(new Error(`${host} does not resolve`), { code: "ENOTFOUND" });
    }
    const refused = addresses.find((entry) => !this.policy.allows(host, entry.address));
    if (refused) throw new OutboundRefused(host, refused.address);
    return addresses;
  }

  /** The socket's resolver: the checked addresses and nothing else, in the shape `net` asks for. */
  private readonly lookup: LookupFunction = (hostname, options, callback) => {
    const wanted = typeof options === "object" && options ? options : {};
    this.checked(canonicalHost(hostname)).then(
      (addresses) => {
        const family = wanted.family === 4 || wanted.family === 6 ? wanted.family : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        const first = usable[0];
        if (!first) {
          callback(
            Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }),
            "",
          );
          return;
        }
        if (wanted.all) {
          (callback as unknown as (e: null, all: ResolvedAddress[]) => void)(null, usable);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}

let shared: OutboundConnector | null = null;

/** A process-wide connector with the default policy (public addresses only), for callers wired with none. */
export function defaultOutbound(): OutboundConnector {
  shared ??= new OutboundConnector();
  return shared;
}
