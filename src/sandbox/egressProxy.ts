/**
 * The host side of a bwrap sandbox's egress: an HTTP
 * proxy, one per sandbox, listening on a unix socket in a private host directory that is bound
 * into the sandbox. The sandbox keeps its own network namespace (no route out, only its own
 * loopback); its supervisor relays 127.0.0.1:3128 inside to this socket (supervisor.ts), and the
 * commands get `HTTP_PROXY`/`HTTPS_PROXY` pointing there. Nothing else leaves the sandbox.
 *
 * It serves `CONNECT host:port` (HTTPS and any other TLS: the proxy never sees inside the tunnel)
 * and absolute-URI `http://` requests. A destination is let through only when
 * - its host matches the policy: `limited` lists hosts (exact name or IPv4, or `*.domain` for
 *   every subdomain of `domain` but not `domain` itself, wire §5), plus the
 *   package registries with `allow_package_managers`; `unrestricted`
 *   lets any host through; no policy yet (a pooled sandbox no session has taken) lets none;
 * - every address its name resolves to is public (`isPublicAddress`, kernel/addressPolicy.ts: never
 *   loopback, link-local, the metadata service, private, CGNAT, reserved…). Under `unrestricted` too: the
 *   worker's loopback (its database, its control plane) and the metadata service must stay out of
 *   a sandbox's reach whatever the environment says.
 * It connects to the address it checked, never resolving the name again (DNS rebinding). A refusal
 * answers 403 with its reason and is logged.
 *
 * With vault `environment_variable` credentials (`useSecrets`, egressSecrets.ts), requests to a host
 * a credential allows get the secret substituted for its placeholder (egressForward.ts); to see
 * inside HTTPS for those hosts, and only those, a CONNECT is answered by the proxy's own TLS with a
 * leaf of the sandbox's CA (egressCa.ts), and the request is forwarded over a new, verified TLS
 * connection. Every other CONNECT stays an opaque tunnel.
 */

import { lookup } from "node:dns/promises";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect, isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { TLSSocket } from "node:tls";
import { isPublicAddress, type ResolvedAddress } from "../kernel/addressPolicy.js";
import { forwardRequest } from "./egressForward.js";
import { hostAllowed, normalizeHost } from "./egressHosts.js";
import type { EgressSecrets } from "./egressSecrets.js";
import type { SandboxSpec } from "./ports.js";
import type { HostOwner } from "./sandboxWorkspace.js";

export { hostAllowed, normalizeHost } from "./egressHosts.js";

/** Where the proxy's directory is bound inside the sandbox, and its socket there. */
export const EGRESS_SANDBOX_DIR = "/run/awaken-egress";
export const EGRESS_SOCKET_NAME = "proxy.sock";
/** What commands inside see: the supervisor's relay on the sandbox's own loopback. */
export const EGRESS_PROXY_PORT = 3128;
export const EGRESS_PROXY_URL = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;

const CONNECT_TIMEOUT_MS = 10_000;

export type EgressPolicy = SandboxSpec["networking"];

/**
 * The public package registries `allow_package_managers` opens (pip, npm, cargo, gem, go): the
 * hosts their clients fetch indexes and archives from by default.
 */
export const PACKAGE_REGISTRY_HOSTS: readonly string[] = [
  "pypi.org",
  "files.pythonhosted.org",
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  "crates.io",
  "index.crates.io",
  "static.crates.io",
  "rubygems.org",
  "index.rubygems.org",
  "proxy.golang.org",
  "sum.golang.org",
];

/** The host list a `limited` policy lets through. */
export function allowedHostsOf(policy: Extract<EgressPolicy, { type: "limited" }>): string[] {
  return [...policy.allowed_hosts, ...(policy.allow_package_managers ? PACKAGE_REGISTRY_HOSTS : [])];
}

export type { ResolvedAddress } from "../kernel/addressPolicy.js";

export interface EgressRefusal {
  host: string;
  port: number;
  reason: string;
}

export interface EgressProxyOptions {
  /** Name resolution (default: the host's resolver, every address). */
  resolve?: (host: string) => Promise<ResolvedAddress[]>;
  /**
   * Which resolved addresses may be connected to (default `isPublicAddress`). Tests only: a
   * product default must never let a sandbox reach the host's loopback or private networks.
   */
  allowAddress?: (address: string) => boolean;
  /** Each refusal (default: one line on stderr). */
  onRefusal?: (refusal: EgressRefusal) => void;
  /**
   * Extra CAs trusted when the proxy itself connects over TLS (an intercepted CONNECT). Tests only,
   * like `allowAddress`: the product verifies upstreams against Node's own CA list.
   */
  upstreamCa?: readonly string[];
}

async function defaultResolve(host: string): Promise<ResolvedAddress[]> {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
}

function defaultOnRefusal(refusal: EgressRefusal): void {
  process.stderr.write(
    `${JSON.stringify({ msg: "sandbox egress refused", host: refusal.host, port: refusal.port, reason: refusal.reason })}\n`,
  );
}

class Refused extends Error {}

/** A policy refusal's reason; anything else failed closed. */
function refusalReason(error: unknown): string {
  return error instanceof Refused
    ? error.message
    : `the proxy failed to check the destination (${String(error)})`;
}

/** `host:port` of a CONNECT request line, or null. */
function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (!match?.[1] || !match[2]) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return null;
  return { host: normalizeHost(match[1]), port };
}

/** One sandbox's egress proxy. */
export class EgressProxy {
  private policy: EgressPolicy | null = null;
  private readonly server: Server;
  private readonly sockets = new Set<Duplex>();
  private readonly resolve: (host: string) => Promise<ResolvedAddress[]>;
  private readonly allowAddress: (address: string) => boolean;
  private readonly onRefusal: (refusal: EgressRefusal) => void;
  private readonly upstreamCa: readonly string[] | undefined;
  private secrets: EgressSecrets | null = null;
  /** Serves the HTTP inside intercepted TLS connections; each socket's checked destination. */
  private readonly inner: Server;
  private readonly intercepted = new WeakMap<object, { host: string; port: number } & ResolvedAddress>();
  private closed = false;

  private constructor(
    /** The private host directory bound at `EGRESS_SANDBOX_DIR`. */
    readonly directory: string,
    options: EgressProxyOptions,
  ) {
    this.resolve = options.resolve ?? defaultResolve;
    this.allowAddress = options.allowAddress ?? isPublicAddress;
    this.onRefusal = options.onRefusal ?? defaultOnRefusal;
    this.upstreamCa = options.upstreamCa;
    this.inner = createServer((req, res) => {
      this.onInterceptedRequest(req, res).catch(() => res.destroy());
    });
    this.inner.on("clientError", (_error, socket) => socket.destroy());
    this.server = createServer((req, res) => {
      this.onRequest(req, res).catch(() => res.destroy());
    });
    this.server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.onConnect(req, socket, head).catch(() => socket.destroy());
    });
    this.server.on("connection", (socket: Socket) => this.track(socket));
    this.server.on("clientError", (_error, socket) => socket.destroy());
  }

  /**
   * Starts a proxy with no policy (it lets nothing through until `setPolicy`), listening in a new
   * directory only `owner` (the sandbox's host uid) can enter.
   */
  static async start(owner: HostOwner | null, options: EgressProxyOptions = {}): Promise<EgressProxy> {
    const directory = await mkdtemp(join(tmpdir(), "awaken-egress-"));
    try {
      const proxy = new EgressProxy(directory, options);
      const socketPath = join(directory, EGRESS_SOCKET_NAME);
      await new Promise<void>((resolve, reject) => {
        proxy.server.once("error", reject);
        proxy.server.listen(socketPath, () => {
          proxy.server.off("error", reject);
          resolve();
        });
      });
      await chmod(socketPath, 0o600);
      if (owner) {
        await chown(socketPath, owner.uid, owner.gid);
        await chown(directory, owner.uid, owner.gid);
      }
      await chmod(directory, 0o700);
      return proxy;
    } catch (error) {
      await rm(directory, { recursive: true, force: true });
      throw error;
    }
  }

  /** The session's networking; until it is set nothing is let through. */
  setPolicy(policy: EgressPolicy): void {
    this.policy =
      policy.type === "limited"
        ? { type: "limited", allowed_hosts: allowedHostsOf(policy) }
        : { type: "unrestricted" };
  }

  /**
   * The sandbox's secret substitution table (set once, before its first command): requests to a
   * host one of its credentials allows get that secret substituted; HTTPS to such hosts is
   * intercepted with the table's CA.
   */
  useSecrets(secrets: EgressSecrets): void {
    this.secrets = secrets;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const socket of this.sockets) socket.destroy();
    this.inner.close();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.directory, { recursive: true, force: true });
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  /** The address to connect to, or throws `Refused`. */
  private async check(host: string): Promise<ResolvedAddress> {
    const policy = this.policy;
    if (policy === null) throw new Refused("this sandbox has no network policy yet");
    if (policy.type === "limited" && !hostAllowed(host, policy.allowed_hosts)) {
      throw new Refused(`${host} is not in the environment's allowed_hosts`);
    }
    let addresses: ResolvedAddress[];
    const family = isIP(host);
    if (family !== 0) {
      addresses = [{ address: host, family: family === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await this.resolve(host);
      } catch (error) {
        throw new Refused(`${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? "error"})`);
      }
    }
    if (addresses.length === 0) throw new Refused(`${host} does not resolve`);
    const blocked = addresses.find((entry) => !this.allowAddress(entry.address));
    if (blocked) {
      throw new Refused(
        `${host} resolves to ${blocked.address}, a loopback, link-local, private or reserved address`,
      );
    }
    const first = addresses[0];
    if (!first) throw new Refused(`${host} does not resolve`);
    return first;
  }

  private refuse(host: string, port: number, reason: string): string {
    this.onRefusal({ host, port, reason });
    // A host a credential is meant for, forbidden here: the run reports it (credential_host_unreachable_error).
    this.secrets?.refused(host, reason);
    return `sandbox egress refused: ${reason}\n`;
  }

  private async onConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.track(client);
    const target = parseAuthority(req.url ?? "");
    if (!target) {
      client.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\nCONNECT needs host:port\n");
      return;
    }
    let address: ResolvedAddress;
    try {
      address = await this.check(target.host);
    } catch (error) {
      const body = this.refuse(target.host, target.port, refusalReason(error));
      client.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    if (this.secrets && this.secrets.forHost(target.host).length > 0) {
      await this.intercept(client, head, { ...target, ...address });
      return;
    }
    const upstream = connect({ host: address.address, port: target.port, family: address.family });
    this.track(upstream);
    upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy(new Error("connect timeout")));
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      upstream.setTimeout(0);
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.once("error", (error) => {
      if (client.destroyed) return;
      if (!connected) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n${error.message}\n`);
      } else {
        client.destroy();
      }
    });
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res.writeHead(400, { "Content-Type": "text/plain", Connection: "close" });
      res.end("this is an HTTP proxy: send an absolute http:// URI or CONNECT\n");
      return;
    }
    if (url.protocol !== "http:") {
      res.writeHead(400, { "Content-Type": "text/plain", Connection: "close" });
      res.end(`only http:// requests are proxied (use CONNECT for ${url.protocol})\n`);
      return;
    }
    const host = normalizeHost(url.hostname);
    const port = url.port === "" ? 80 : Number(url.port);
    let address: ResolvedAddress;
    try {
      address = await this.check(host);
    } catch (error) {
      const body = this.refuse(host, port, refusalReason(error));
      res.writeHead(403, { "Content-Type": "text/plain", "Content-Length": Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    await forwardRequest(
      req,
      res,
      { host, port, ...address, tls: false, path: `${url.pathname}${url.search}` },
      this.forwardOptions(),
    );
  }

  private forwardOptions() {
    return { secrets: this.secrets, ...(this.upstreamCa ? { upstreamCa: this.upstreamCa } : {}) };
  }

  /**
   * A CONNECT to a host with a substitution: the proxy answers the sandbox's TLS itself, with a
   * leaf for that host signed by the sandbox's CA (which only this sandbox trusts), and serves the
   * HTTP inside on `inner`. Only HTTP/1.1 is offered (ALPN), so clients speak what it parses.
   */
  private async intercept(
    client: Duplex,
    head: Buffer,
    target: { host: string; port: number } & ResolvedAddress,
  ): Promise<void> {
    const secrets = this.secrets;
    if (!secrets) return;
    const context = await secrets.ca.contextFor(target.host);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) client.unshift(head);
    const tls = new TLSSocket(client as Socket, {
      isServer: true,
      secureContext: context,
      ALPNProtocols: ["http/1.1"],
    });
    this.track(tls);
    this.intercepted.set(tls, target);
    this.inner.emit("connection", tls);
  }

  private async onInterceptedRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = this.intercepted.get(req.socket);
    if (!target) {
      res.destroy();
      return;
    }
    // Origin-form inside the tunnel; an absolute URI keeps only its path (the tunnel's host was checked).
    let path = req.url ?? "/";
    if (!path.startsWith("/")) {
      try {
        const url = new URL(path);
        path = `${url.pathname}${url.search}`;
      } catch {
        path = "/";
      }
    }
    await forwardRequest(req, res, { ...target, tls: true, path }, this.forwardOptions());
  }
}
