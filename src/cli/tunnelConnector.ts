/**
 * The tunnel connector (`awaken tunnel`): runs inside a private network, dials OUT to the
 * coordinator over one long-lived connection (an HTTP/1.1 Upgrade to a framed stream, see
 * kernel/tunnelFrames.ts), authenticates with the tunnel token, and makes the MCP requests the
 * coordinator sends it. It is no open proxy: a request names a route, and only the routes the
 * operator gave this connector (`--route name=https://host:port`) exist; the host and port come
 * from there, never from the request. The MCP server's TLS must chain to the tunnel's CA
 * certificates (sent with each request, so an archived certificate stops being trusted at once)
 * and to nothing else. With a client identity (`--client-cert`/`--client-key`, the private network's
 * own, never the coordinator's) it presents that certificate to every route's MCP server that asks
 * for one (mutual TLS). The token and the client key are never printed.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Duplex } from "node:stream";
import { Agent, request as undiciRequest } from "undici";
import {
  type ConnectorFrame,
  endToEndHeaders,
  FramedSocket,
  type RelayFrame,
  TUNNEL_CONNECT_PATH,
  TUNNEL_ID_HEADER,
  TUNNEL_UPGRADE_PROTOCOL,
} from "../kernel/tunnelFrames.js";
import type { ClientIdentity } from "./clientIdentity.js";
import { originTls } from "./originTlsFailures.js";

export interface ConnectorOptions {
  coordinatorUrl: URL;
  token: string;
  /** Route name → the HTTPS origin it reaches (the allow-list). */
  routes: ReadonlyMap<string, URL>;
  /** Extra CA (PEM) for an HTTPS coordinator with a private certificate; default: the system's. */
  coordinatorCa?: string | undefined;
  /** The certificate this connector presents to every route's MCP server that asks for one. */
  clientIdentity?: ClientIdentity | undefined;
  log(line: string): void;
}

/** Why the connector stopped for good: the coordinator refused the token. */
export class TokenRefused extends Error {}

const BACKOFF_MS = { first: 500, max: 30_000 } as const;
const CONNECT_TIMEOUT_MS = 15_000;
/** Agents per CA set kept (the tunnel holds at most two certificates; sets change rarely). */
const AGENT_CACHE = 4;

export class TunnelConnector {
  private stopped = false;
  private socket: FramedSocket<RelayFrame, ConnectorFrame> | null = null;
  private readonly inflight = new Map<number, AbortController>();
  private readonly agents = new Map<string, Agent>();
  private readonly tls = originTls();
  private wake: (() => void) | null = null;

  constructor(private readonly options: ConnectorOptions) {}

  /** Connects, and reconnects after a drop, until stopped; rejects with `TokenRefused`. */
  async run(): Promise<void> {
    let delay: number = BACKOFF_MS.first;
    while (!this.stopped) {
      const outcome = await this.connectOnce();
      if (outcome === "refused") {
        throw new TokenRefused(
          "the coordinator refused the tunnel token (unknown, rotated, or its tunnel is archived)",
        );
      }
      if (this.stopped) break;
      if (outcome === "served") delay = BACKOFF_MS.first;
      this.options.log(`tunnel connector: disconnected; reconnecting in ${delay} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      delay = Math.min(delay * 2, BACKOFF_MS.max);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.socket?.close("the connector stopped");
    this.wake?.();
    await Promise.all([...this.agents.values()].map((a) => a.close().catch(() => {})));
  }

  /** One connection's life: `served` once upgraded, `failed` if it never was, `refused` on 401/403. */
  private connectOnce(): Promise<"served" | "failed" | "refused"> {
    const url = this.options.coordinatorUrl;
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      const req = request({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: TUNNEL_CONNECT_PATH,
        method: "GET",
        timeout: CONNECT_TIMEOUT_MS,
        headers: {
          Connection: "Upgrade",
          Upgrade: TUNNEL_UPGRADE_PROTOCOL,
          Authorization: `Bearer ${this.options.token}`,
        },
        ...(this.options.coordinatorCa ? { ca: this.options.coordinatorCa } : {}),
      });
      req.on("upgrade", (response, socket: Duplex, head: Buffer) => {
        req.setTimeout(0);
        const tunnelId = String(response.headers[TUNNEL_ID_HEADER] ?? "");
        const routes = [...this.options.routes].map(([name, origin]) => `${name} → ${origin.origin}`);
        this.options.log(
          `tunnel connector: connected to ${url.origin} for tunnel ${tunnelId} (routes: ${routes.join(", ")})`,
        );
        this.socket = new FramedSocket<RelayFrame, ConnectorFrame>(
          socket,
          (frame) => this.received(frame),
          (reason) => {
            this.socket = null;
            for (const controller of this.inflight.values()) controller.abort();
            this.inflight.clear();
            if (!this.stopped) this.options.log(`tunnel connector: connection lost (${reason})`);
            resolve("served");
          },
        );
        this.socket.feed(head);
      });
      req.on("response", (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        this.options.log(`tunnel connector: the coordinator answered HTTP ${status} instead of upgrading`);
        resolve(status === 401 || status === 403 ? "refused" : "failed");
      });
      req.on("timeout", () => req.destroy(new Error("timed out connecting")));
      req.on("error", (error) => {
        this.options.log(`tunnel connector: could not reach ${url.origin}: ${error.message}`);
        resolve("failed");
      });
      req.end();
    });
  }

  private received(frame: RelayFrame): void {
    if (frame.t === "cancel") {
      this.inflight.get(frame.id)?.abort();
      this.inflight.delete(frame.id);
      return;
    }
    if (frame.t === "req") void this.carry(frame);
  }

  /** Makes one request in this network, within the allow-list, and streams its answer back. */
  private async carry(frame: Extract<RelayFrame, { t: "req" }>): Promise<void> {
    const send = (out: ConnectorFrame) => this.socket?.send(out);
    const fail = (message: string) => send({ t: "fail", id: frame.id, message });
    const origin = this.options.routes.get(frame.route);
    if (!origin) {
      this.options.log(
        `tunnel connector: refused a request for route "${frame.route}" (not on the allow-list)`,
      );
      fail(`route "${frame.route}" is not on this connector's allow-list`);
      return;
    }
    if (typeof frame.path !== "string" || !frame.path.startsWith("/") || frame.path.startsWith("//")) {
      fail("the request path must start with a single /");
      return;
    }
    if (typeof frame.method !== "string" || !/^[A-Z]{1,16}$/.test(frame.method)) {
      fail("the request method is not a plain HTTP method");
      return;
    }
    if (!Array.isArray(frame.ca) || frame.ca.length === 0) {
      fail("the tunnel has no CA certificate to trust the MCP server with");
      return;
    }
    const target = new URL(frame.path, origin);
    if (target.origin !== origin.origin) {
      fail("the request path left the route's origin");
      return;
    }
    const controller = new AbortController();
    this.inflight.set(frame.id, controller);
    try {
      const response = await undiciRequest(target, {
        method: frame.method as "GET",
        headers: frame.headers.flat(),
        body: frame.body === null ? null : Buffer.from(frame.body, "base64"),
        dispatcher: this.agentFor(frame.ca),
        signal: controller.signal,
      });
      const headers: Array<[string, string]> = [];
      for (const [name, value] of Object.entries(response.headers)) {
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
          headers.push([name, v]);
      }
      send({ t: "head", id: frame.id, status: response.statusCode, headers: endToEndHeaders(headers) });
      for await (const chunk of response.body) {
        send({ t: "data", id: frame.id, body: Buffer.from(chunk as Buffer).toString("base64") });
      }
      send({ t: "end", id: frame.id });
    } catch (error) {
      if (!controller.signal.aborted)
        fail(this.tls.explain(error, this.options.clientIdentity !== undefined));
    } finally {
      this.inflight.delete(frame.id);
    }
  }

  /**
   * A connection pool trusting exactly these CA certificates (no system roots), presenting the
   * client identity, if any, when the MCP server asks for a certificate.
   */
  private agentFor(ca: string[]): Agent {
    const key = ca.join("\n");
    let agent = this.agents.get(key);
    if (!agent) {
      if (this.agents.size >= AGENT_CACHE) {
        const [oldestKey, oldest] = this.agents.entries().next().value as [string, Agent];
        this.agents.delete(oldestKey);
        void oldest.close().catch(() => {});
      }
      // `request` never follows a redirect: a 3xx goes back to the MCP client as it is.
      const identity = this.options.clientIdentity;
      agent = new Agent({
        connect: this.tls.connector({
          ca,
          rejectUnauthorized: true,
          ...(identity ? { cert: identity.cert, key: identity.key } : {}),
        }),
      });
      this.agents.set(key, agent);
    }
    return agent;
  }
}
