import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";

/**
 * How long a client may hold a connection without using it, and how many it may hold. A request
 * must arrive in bounded time; a response (an event stream) is never cut by these.
 */
export interface ConnectionLimits {
  /** A connection must send its request headers within this (one that sends nothing too). */
  headersTimeoutMs: number;
  /** The whole request, headers and body, must arrive within this; the response is not bounded. */
  requestTimeoutMs: number;
  /** A kept-alive connection waiting for its next request is closed after this. */
  keepAliveTimeoutMs: number;
  /** Connections open at once over all clients; more are dropped as they arrive. */
  maxConnections: number;
  /** Connections open at once from one client address; behind a reverse proxy, its address is the one. */
  maxConnectionsPerAddress: number;
}

/**
 * Defaults for a server on the internet or behind a reverse proxy. The keep-alive outlives the
 * 60 s idle timeout of the common proxies and load balancers, so they close first, never mid-reuse;
 * the per-address cap leaves a proxy room for a thousand open event streams.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 8_192,
  maxConnectionsPerAddress: 1_024,
};

/** The defaults with each bound `chosen` sets (an undefined one keeps its default). */
export function connectionLimitsWith(chosen: Partial<ConnectionLimits> = {}): ConnectionLimits {
  const limits = { ...DEFAULT_CONNECTION_LIMITS };
  for (const key of Object.keys(limits) as Array<keyof ConnectionLimits>) {
    const value = chosen[key];
    if (value !== undefined) limits[key] = value;
  }
  return limits;
}

/** Node refuses a header deadline past the request's (which includes the headers); so does start-up, by name. */
export function checkConnectionLimits(limits: ConnectionLimits): void {
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new Error(
      `the headers timeout (${limits.headersTimeoutMs} ms) must not exceed the request timeout (${limits.requestTimeoutMs} ms), which includes the headers`,
    );
}

/** The Fastify server options that enforce the time bounds. */
export function connectionTimeouts(limits: ConnectionLimits) {
  return {
    // Bounds the request's arrival only: a response (an event stream) may stay open for hours.
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: deadlineCheckIntervalMs(limits),
    },
  };
}

/** The count bounds, on a server already made: Node's total cap and the per-address one. */
export function capConnections(server: Server, limits: ConnectionLimits, log: FastifyBaseLogger): void {
  server.maxConnections = limits.maxConnections;
  capConnectionsPerAddress(server, limits.maxConnectionsPerAddress, log);
}

/**
 * How often Node checks the header and request deadlines: a deadline is enforced up to this late,
 * so short test deadlines get a finer check than the production ones need.
 */
function deadlineCheckIntervalMs(limits: ConnectionLimits): number {
  return Math.max(
    50,
    Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
  );
}

/**
 * Caps the connections of each client address: one over the cap is destroyed on arrival, before
 * a byte of it is parsed, so connections one client holds cannot exhaust the file descriptors that
 * every tenant's requests need. (The total cap is Node's own `server.maxConnections`.)
 */
function capConnectionsPerAddress(server: Server, perAddress: number, log: FastifyBaseLogger): void {
  const open = new Map<string, { count: number; warned: boolean }>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown";
    const entry = open.get(address) ?? { count: 0, warned: false };
    if (entry.count >= perAddress) {
      // One line while an address stays over its cap: a flood must not become a log flood.
      if (!entry.warned)
        log.warn({ address, limit: perAddress }, "a client address is over its connection cap");
      entry.warned = true;
      socket.destroy();
      return;
    }
    entry.count += 1;
    open.set(address, entry);
    socket.once("close", () => {
      entry.count -= 1;
      if (entry.count === 0) open.delete(address);
    });
  });
}
