/**
 * The coordinator's side of MCP tunnels: the connectors connected to this process, and the fetch
 * an MCP client uses for a URL in a tunnel's domain. A request is carried only through a live
 * tunnel of the run's own workspace that holds at least one CA certificate (SDK: a tunnel rejects
 * MCP traffic until one is added), over that tunnel's connector, which makes the request in its
 * network trusting those certificates only. Archiving a tunnel drops its connections at once.
 * Tokens are compared by hash and never logged.
 */
import type { Duplex } from "node:stream";
import { PlatformError } from "../../kernel/errors.js";
import { tunnelAddressOf } from "../../kernel/tunnelDomains.js";
import {
  type ConnectorFrame,
  endToEndHeaders,
  FramedSocket,
  type RelayFrame,
} from "../../kernel/tunnelFrames.js";
import type { TunnelRecord, TunnelStore } from "./ports.js";
import type { TunnelChanges } from "./tunnelService.js";
import { tunnelTokenHash } from "./tunnelTokens.js";

/** Why a request could not be carried: the MCP client reports it as its connection failure. */
export class TunnelUnavailable extends PlatformError {
  constructor(message: string) {
    super("tunnel_unavailable", message);
    this.name = "TunnelUnavailable";
  }
}

interface Pending {
  head: (response: Response) => void;
  fail: (error: Error) => void;
  controller: ReadableStreamDefaultController<Uint8Array> | null;
  settled: boolean;
}

class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  readonly framed: FramedSocket<ConnectorFrame, RelayFrame>;

  constructor(
    readonly tunnelId: string,
    socket: Duplex,
    head: Buffer,
    private readonly gone: (c: Connection) => void,
  ) {
    this.framed = new FramedSocket<ConnectorFrame, RelayFrame>(
      socket,
      (frame) => this.received(frame),
      (reason) => this.closed(reason),
    );
    this.framed.feed(head);
  }

  request(
    frame: Omit<Extract<RelayFrame, { t: "req" }>, "t" | "id">,
    signal: AbortSignal | undefined,
  ): Promise<Response> {
    if (signal?.aborted) return Promise.reject(new TunnelUnavailable("the request was cancelled"));
    const id = this.nextId++;
    return new Promise<Response>((resolve, reject) => {
      const entry: Pending = { head: resolve, fail: reject, controller: null, settled: false };
      this.pending.set(id, entry);
      signal?.addEventListener(
        "abort",
        () => {
          if (!this.pending.has(id)) return;
          this.pending.delete(id);
          this.framed.send({ t: "cancel", id });
          const error = new TunnelUnavailable("the request was cancelled");
          if (entry.settled) entry.controller?.error(error);
          else reject(error);
        },
        { once: true },
      );
      this.framed.send({ t: "req", id, ...frame });
    });
  }

  close(reason: string): void {
    this.framed.close(reason);
  }

  private received(frame: ConnectorFrame): void {
    const entry = this.pending.get(frame.id);
    if (!entry) return;
    switch (frame.t) {
      case "head": {
        if (entry.settled) return;
        entry.settled = true;
        const body =
          frame.status === 204 || frame.status === 304
            ? null
            : new ReadableStream<Uint8Array>({
                start: (controller) => {
                  entry.controller = controller;
                },
                cancel: () => {
                  if (this.pending.delete(frame.id)) this.framed.send({ t: "cancel", id: frame.id });
                },
              });
        entry.head(new Response(body, { status: frame.status, headers: frame.headers }));
        return;
      }
      case "data":
        entry.controller?.enqueue(new Uint8Array(Buffer.from(frame.body, "base64")));
        return;
      case "end":
        this.pending.delete(frame.id);
        entry.controller?.close();
        return;
      case "fail": {
        this.pending.delete(frame.id);
        const error = new TunnelUnavailable(
          `the tunnel's connector could not reach the MCP server: ${frame.message}`,
        );
        if (entry.settled) entry.controller?.error(error);
        else entry.fail(error);
        return;
      }
    }
  }

  private closed(reason: string): void {
    const error = new TunnelUnavailable(`the tunnel's connector disconnected (${reason})`);
    for (const entry of this.pending.values()) {
      if (entry.settled) entry.controller?.error(error);
      else entry.fail(error);
    }
    this.pending.clear();
    this.gone(this);
  }
}

export class TunnelRelay implements TunnelChanges {
  /** Live connections per tunnel, newest last: requests go to the newest. */
  private readonly connections = new Map<string, Connection[]>();

  constructor(private readonly store: TunnelStore) {}

  /** The live tunnel a connector's token opens, or null (unknown, rotated away, or archived). */
  authenticate(token: string): Promise<TunnelRecord | null> {
    return this.store.findLiveByTokenHash(tunnelTokenHash(token));
  }

  /** Takes an upgraded socket for an authenticated tunnel. */
  attach(tunnel: TunnelRecord, socket: Duplex, head: Buffer): void {
    const connection = new Connection(tunnel.id, socket, head, (c) => this.detach(c));
    this.connections.set(tunnel.id, [...(this.connections.get(tunnel.id) ?? []), connection]);
  }

  /** An archived tunnel's connections are dropped now; new ones are refused by `authenticate`. */
  archived(tunnelId: string): void {
    for (const connection of this.connections.get(tunnelId) ?? [])
      connection.close("the tunnel was archived");
    this.connections.delete(tunnelId);
  }

  connectedCount(tunnelId: string): number {
    return this.connections.get(tunnelId)?.length ?? 0;
  }

  /** Drops every connection (shutdown). */
  closeAll(): void {
    for (const tunnelId of [...this.connections.keys()]) this.archived(tunnelId);
  }

  /** The MCP client's fetch for a URL in a tunnel's domain, for a run of `workspaceId`. */
  async fetch(workspaceId: string, url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const address = tunnelAddressOf(target.hostname);
    if (!address) throw new TunnelUnavailable(`${target.hostname} is not in a tunnel's domain`);
    const tunnel = await this.store.findByDomain(workspaceId, address.domain);
    if (!tunnel) throw new TunnelUnavailable(`no tunnel of this workspace has the domain ${address.domain}`);
    if (tunnel.archivedAt !== null) {
      throw new TunnelUnavailable(`tunnel ${tunnel.id} is archived: it carries no MCP traffic any more`);
    }
    const certificates = await this.store.liveCertificates(tunnel.id);
    if (certificates.length === 0) {
      throw new TunnelUnavailable(
        `tunnel ${tunnel.id} has no CA certificate: it carries no MCP traffic until one is added`,
      );
    }
    const connection = this.connections.get(tunnel.id)?.at(-1);
    if (!connection) throw new TunnelUnavailable(`tunnel ${tunnel.id} has no connector connected`);
    const headers = endToEndHeaders(new Headers(init.headers).entries());
    return connection.request(
      {
        method: (init.method ?? "GET").toUpperCase(),
        route: address.route,
        path: `${target.pathname}${target.search}`,
        headers,
        body: await bodyText(init.body),
        ca: certificates.map((c) => c.pem),
      },
      init.signal ?? undefined,
    );
  }

  private detach(connection: Connection): void {
    const left = (this.connections.get(connection.tunnelId) ?? []).filter((c) => c !== connection);
    if (left.length === 0) this.connections.delete(connection.tunnelId);
    else this.connections.set(connection.tunnelId, left);
  }
}

/** A request body as base64 (an MCP client sends JSON text); null for none. */
async function bodyText(body: RequestInit["body"]): Promise<string | null> {
  if (body === undefined || body === null) return null;
  const bytes = Buffer.from(await new Response(body).arrayBuffer());
  return bytes.toString("base64");
}
