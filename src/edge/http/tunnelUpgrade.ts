/**
 * The door tunnel connectors dial: `GET /v1/tunnels/connect` with `Upgrade: awaken-tunnel/1` and
 * `Authorization: Bearer <tunnel token>`. A token that opens a live tunnel gets `101 Switching
 * Protocols` and its socket becomes that tunnel's connection (kernel/tunnelFrames.ts); anything
 * else an HTTP error and a closed socket. Served beside the HTTP routes (Fastify does not handle
 * upgrades). The token is never logged; a refusal logs only that a connector was refused.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { TunnelRelay } from "../../coordinator/tunnels/tunnelRelay.js";
import { TUNNEL_CONNECT_PATH, TUNNEL_ID_HEADER, TUNNEL_UPGRADE_PROTOCOL } from "../../kernel/tunnelFrames.js";

export interface TunnelUpgradeLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

function refuse(socket: Duplex, status: number, reason: string, message: string): void {
  const body = JSON.stringify({ type: "error", error: { type: "authentication_error", message } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function serveTunnelUpgrades(server: Server, relay: TunnelRelay, log: TunnelUpgradeLog): void {
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (request.url ?? "").split("?")[0];
    const protocol = String(request.headers.upgrade ?? "").toLowerCase();
    if (path !== TUNNEL_CONNECT_PATH || protocol !== TUNNEL_UPGRADE_PROTOCOL) {
      socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      return;
    }
    const authorization = request.headers.authorization ?? "";
    const token = authorization.startsWith("Bearer ") ? authorization.slice("Bearer ".length).trim() : "";
    socket.on("error", () => {});
    void relay.authenticate(token).then(
      (tunnel) => {
        if (!tunnel || token === "") {
          log.warn(
            { component: "tunnels" },
            "a tunnel connector was refused: unknown, rotated or archived token",
          );
          refuse(
            socket,
            401,
            "Unauthorized",
            "the tunnel token is not valid (unknown, rotated, or its tunnel is archived)",
          );
          return;
        }
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${TUNNEL_UPGRADE_PROTOCOL}\r\nConnection: Upgrade\r\n${TUNNEL_ID_HEADER}: ${tunnel.id}\r\n\r\n`,
        );
        // A long-lived connection: no HTTP idle timeout applies to it; the kernel keeps it alive.
        const tcp = socket as Partial<Pick<Socket, "setTimeout" | "setKeepAlive">>;
        tcp.setTimeout?.(0);
        tcp.setKeepAlive?.(true, 30_000);
        relay.attach(tunnel, socket, head);
        log.info({ component: "tunnels", tunnelId: tunnel.id }, "tunnel connector connected");
      },
      (error: unknown) => {
        log.warn({ component: "tunnels", err: error }, "a tunnel connector could not be authenticated");
        socket.end("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      },
    );
  });
}
