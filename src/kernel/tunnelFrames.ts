/**
 * The tunnel connector's wire: after an HTTP/1.1 Upgrade (`Upgrade: awaken-tunnel/1`) the one
 * socket carries length-prefixed JSON frames both ways (4-byte big-endian length, then UTF-8 JSON).
 * The coordinator sends each MCP request (`req`) and may cancel it; the connector answers with the
 * response's head, its body in chunks as they arrive (so a streamed MCP answer streams), and its
 * end, or a failure. Bodies are base64. One multiplexed socket per connector: nothing to accept on
 * the private network's side, and nothing but Node's own `http` and `net` on either side.
 */
import type { Duplex } from "node:stream";

export const TUNNEL_UPGRADE_PROTOCOL = "awaken-tunnel/1";
export const TUNNEL_CONNECT_PATH = "/v1/tunnels/connect";
/** The 101 answer names the tunnel the token opened (an id, not a secret). */
export const TUNNEL_ID_HEADER = "awaken-tunnel-id";
/** A frame bigger than this ends the connection (a request or a chunk is far smaller). */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;

export type Headers = Array<[string, string]>;

export type RelayFrame =
  | {
      t: "req";
      id: number;
      method: string;
      /** The labels before the tunnel's domain: the connector's allow-list key. */
      route: string;
      /** Path and query, always starting with `/`. */
      path: string;
      headers: Headers;
      body: string | null;
      /** The tunnel's CA certificates (PEM) now: the only roots the MCP server's TLS may chain to. */
      ca: string[];
    }
  | { t: "cancel"; id: number };

export type ConnectorFrame =
  | { t: "head"; id: number; status: number; headers: Headers }
  | { t: "data"; id: number; body: string }
  | { t: "end"; id: number }
  | { t: "fail"; id: number; message: string };

/** Writes and reads frames on a socket; `onFrame` gets each whole frame, `onClose` once. */
export class FramedSocket<In, Out> {
  private buffered: Buffer = Buffer.alloc(0);
  private closed = false;

  constructor(
    private readonly socket: Duplex,
    private readonly onFrame: (frame: In) => void,
    private readonly onClose: (reason: string) => void,
  ) {
    socket.on("data", (chunk: Buffer) => this.read(chunk));
    socket.on("error", (error) => this.close(error.message));
    socket.on("close", () => this.close("connection closed"));
    socket.on("end", () => this.close("connection ended"));
  }

  /** Bytes the upgrade already read past its head belong to the first frames. */
  feed(head: Buffer): void {
    if (head.length > 0) this.read(head);
  }

  send(frame: Out): void {
    if (this.closed) return;
    const json = Buffer.from(JSON.stringify(frame), "utf8");
    const length = Buffer.alloc(4);
    length.writeUInt32BE(json.length);
    this.socket.write(Buffer.concat([length, json]));
  }

  close(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
    this.onClose(reason);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (!this.closed && this.buffered.length >= 4) {
      const size = this.buffered.readUInt32BE(0);
      if (size > MAX_FRAME_BYTES) {
        this.close("a frame exceeded the size limit");
        return;
      }
      if (this.buffered.length < 4 + size) return;
      const body = this.buffered.subarray(4, 4 + size);
      this.buffered = this.buffered.subarray(4 + size);
      let frame: In;
      try {
        frame = JSON.parse(body.toString("utf8")) as In;
      } catch {
        this.close("a frame was not JSON");
        return;
      }
      this.onFrame(frame);
    }
  }
}

/** Headers that describe one hop, never carried across the tunnel (either way). */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
]);

export function endToEndHeaders(entries: Iterable<[string, string]>): Headers {
  const kept: Headers = [];
  for (const [name, value] of entries) {
    if (!HOP_BY_HOP.has(name.toLowerCase())) kept.push([name, value]);
  }
  return kept;
}
