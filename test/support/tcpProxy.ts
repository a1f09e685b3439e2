/**
 * A small TCP proxy for fault tests: it sits between an HTTP/1.1 client (a worker) and a server,
 * reads each request whole (headers + Content-Length body) and lets the test decide its fate:
 * forward it, forward it but destroy the connection before the response is relayed (the server
 * did the work, the client never hears of it), or hold it forever (a request lost on the way).
 * HTTP/1.1 clients (undici) send one request at a time per connection, so the next response bytes
 * on a connection belong to the request just forwarded.
 */

import type { AddressInfo } from "node:net";
import { connect, createServer, type Server, type Socket } from "node:net";

export interface ProxiedRequest {
  method: string;
  path: string;
  body: string;
}

export type RequestFate = "forward" | "drop_response" | "hold";

export interface TcpProxy {
  url: string;
  /** Every request seen, in arrival order, with the fate it was given. */
  requests: Array<ProxiedRequest & { fate: RequestFate }>;
  setDecider(decide: (request: ProxiedRequest) => RequestFate): void;
  /**
   * Destroys both sides of every connection whose latest request matches (a partition of that
   * connection only: its server sees the close, its client an error). How many were cut.
   */
  cut(match: (request: ProxiedRequest) => boolean): number;
  /** Where connections opened from now on go (another replica behind the same address). */
  retarget(target: string): void;
  close(): Promise<void>;
}

const HEADER_END = Buffer.from("\r\n\r\n");

export async function startTcpProxy(target: string): Promise<TcpProxy> {
  let upstream = new URL(target);
  const requests: TcpProxy["requests"] = [];
  let decide: (request: ProxiedRequest) => RequestFate = () => "forward";
  const sockets = new Set<Socket>();
  /** Each open connection's latest request, and how to cut it. */
  const latest = new Map<Socket, { request: ProxiedRequest; cut: () => void }>();

  const server: Server = createServer((client) => {
    const server = connect(Number(upstream.port), upstream.hostname);
    sockets.add(client);
    sockets.add(server);
    let buffered = Buffer.alloc(0);
    let dropNextResponse = false;
    let holding = false;
    const destroyBoth = () => {
      client.destroy();
      server.destroy();
    };
    client.on("close", () => {
      sockets.delete(client);
      latest.delete(client);
      server.destroy();
    });
    server.on("close", () => {
      sockets.delete(server);
      client.destroy();
    });
    client.on("error", destroyBoth);
    server.on("error", destroyBoth);
    server.on("data", (chunk) => {
      if (dropNextResponse) {
        // The server answered, so it has done the work: the client must never see the answer.
        destroyBoth();
        return;
      }
      client.write(chunk);
    });
    client.on("data", (chunk) => {
      if (holding) return;
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const headerEnd = buffered.indexOf(HEADER_END);
        if (headerEnd < 0) return;
        const head = buffered.subarray(0, headerEnd).toString("latin1");
        const [requestLine = "", ...headerLines] = head.split("\r\n");
        const length = contentLength(headerLines);
        if (length < 0) {
          destroyBoth(); // chunked bodies are not supported: fail loudly rather than misroute
          return;
        }
        const total = headerEnd + HEADER_END.length + length;
        if (buffered.length < total) return;
        const raw = buffered.subarray(0, total);
        buffered = buffered.subarray(total);
        const [method = "", path = ""] = requestLine.split(" ");
        const request = {
          method,
          path,
          body: raw.subarray(headerEnd + HEADER_END.length).toString("utf8"),
        };
        const fate = decide(request);
        requests.push({ ...request, fate });
        latest.set(client, { request, cut: destroyBoth });
        if (fate === "hold") {
          holding = true;
          return;
        }
        if (fate === "drop_response") dropNextResponse = true;
        server.write(raw);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setDecider(next) {
      decide = next;
    },
    retarget(next) {
      upstream = new URL(next);
    },
    cut(match) {
      const cut = [...latest.values()].filter((connection) => match(connection.request));
      for (const connection of cut) connection.cut();
      return cut.length;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function contentLength(headerLines: string[]): number {
  for (const line of headerLines) {
    const [name, value] = line.split(":");
    if (name?.trim().toLowerCase() === "transfer-encoding") return -1;
    if (name?.trim().toLowerCase() === "content-length") return Number(value?.trim() ?? "0");
  }
  return 0;
}
