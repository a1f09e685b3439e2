/**
 * What a test needs to prove a streaming edge holds a client that stops reading: a raw HTTP client
 * that reads the response headers and then never reads again, the server-side view of that
 * response's buffer (the in-process server's own `ServerResponse`), and the session tail the edge
 * pulls from (how far the producer got, and whether it was returned).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import type { SessionTail, TailItem, TailOpenOptions } from "../../src/coordinator/sessionTail.js";

export interface StalledClient {
  status: number;
  /** Hangs up: the server sees the connection close. */
  close(): void;
}

/**
 * Sends one request over a fresh socket, waits for the response's status line and headers, then
 * pauses the socket for good: the kernel's buffers fill and the server's writes back up.
 */
export function stalledRequest(
  url: string,
  request: { method: string; path: string; headers: Record<string, string>; body?: string },
): Promise<StalledClient> {
  const { hostname, port } = new URL(url);
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${hostname}:${port}`];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${value}`);
  if (body) lines.push(`content-length: ${body.length}`);
  const head = `${lines.join("\r\n")}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), hostname);
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString("latin1");
      const end = seen.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.pause();
      const status = Number(seen.slice(0, end).split(" ")[1]);
      resolve({ status, close: () => socket.destroy() });
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(head);
    if (body) socket.write(body);
  });
}

export interface WatchedResponse {
  /** The most bytes the response held in its own buffer right after any write. */
  maxBuffered: number;
  /** The bytes the edge handed to the response. */
  written: number;
  readonly closed: Promise<void>;
  readonly response: ServerResponse;
}

/**
 * The server-side view of the next response whose request matches: every `write`/`end` is
 * observed (passed through unchanged) for how much the response buffers.
 */
export function watchNextResponse(
  server: Server,
  matches: (request: IncomingMessage) => boolean,
): Promise<WatchedResponse> {
  return new Promise((resolve) => {
    const onRequest = (request: IncomingMessage, response: ServerResponse) => {
      if (!matches(request)) return;
      server.off("request", onRequest);
      let onClose!: () => void;
      const closed = new Promise<void>((done) => {
        onClose = done;
      });
      response.once("close", () => onClose());
      const watched: WatchedResponse = { maxBuffered: 0, written: 0, closed, response };
      const observe = (chunk: unknown) => {
        if (typeof chunk === "string") watched.written += Buffer.byteLength(chunk);
        else if (chunk instanceof Uint8Array) watched.written += chunk.length;
        watched.maxBuffered = Math.max(watched.maxBuffered, response.writableLength);
      };
      const write = response.write;
      response.write = function (this: ServerResponse, ...args: Parameters<ServerResponse["write"]>) {
        const ok = write.apply(this, args);
        observe(args[0]);
        return ok;
      } as ServerResponse["write"];
      const end = response.end;
      response.end = function (this: ServerResponse, ...args: Parameters<ServerResponse["end"]>) {
        const result = end.apply(this, args);
        if (typeof args[0] !== "function") observe(args[0]);
        return result;
      } as ServerResponse["end"];
      resolve(watched);
    };
    server.on("request", onRequest);
  });
}

export interface WatchedTail {
  session: { id: string; threadId: string };
  /** Items the consumer pulled so far. */
  pulled: number;
  /** Resolves when the consumer stopped: the iteration ended or was returned. */
  readonly stopped: Promise<void>;
}

/**
 * Wraps the next `open` of `tail` (every edge opens the process's one tail): counts the items its
 * consumer pulls and notes when it stops. The tail's own behaviour is unchanged.
 */
export function watchNextTail(tail: SessionTail): Promise<WatchedTail> {
  const open = tail.open;
  return new Promise((resolve) => {
    tail.open = function (this: SessionTail, session, options: TailOpenOptions) {
      tail.open = open;
      const items = open.call(this, session, options);
      let onStop!: () => void;
      const stopped = new Promise<void>((done) => {
        onStop = done;
      });
      const watched: WatchedTail = {
        session: { id: session.id, threadId: session.threadId },
        pulled: 0,
        stopped,
      };
      resolve(watched);
      return {
        [Symbol.asyncIterator]() {
          const iterator = items[Symbol.asyncIterator]();
          return {
            async next(): Promise<IteratorResult<TailItem>> {
              try {
                const result = await iterator.next();
                if (result.done) onStop();
                else watched.pulled += 1;
                return result;
              } catch (error) {
                onStop();
                throw error;
              }
            },
            async return(): Promise<IteratorResult<TailItem>> {
              onStop();
              return (await iterator.return?.()) ?? { done: true, value: undefined };
            },
          };
        },
      };
    };
  });
}
