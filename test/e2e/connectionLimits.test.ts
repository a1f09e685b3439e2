/**
 * Client connections are bounded in time and number, before any authentication: a connection
 * that sends nothing, half its headers or half its body is closed within the bounds, one address
 * cannot hold more than its share, and none of it cuts a long-lived event stream.
 */
import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendRawHttp } from "../support/rawSocket.js";
import { createSession, isEndTurnIdle, StreamReader, userMessage } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

/** Short bounds so the test runs in seconds; the defaults are the same code with larger numbers. */
const BOUNDS = { headersTimeoutMs: 600, requestTimeoutMs: 1_200, keepAliveTimeoutMs: 600 };
/** Node checks the deadlines on an interval and adds a second to the keep-alive: room for both. */
const SLACK_MS = 2_500;

interface Watched {
  socket: Socket;
  /** Resolves with the ms from connect to close and what the server sent; rejects after `limitMs`. */
  closed: Promise<{ ms: number; received: string }>;
}

function watch(url: string, limitMs = 10_000): Promise<Watched> {
  const { port } = new URL(url);
  return new Promise((resolveOpen, rejectOpen) => {
    const socket = connect(Number(port), "127.0.0.1");
    const startedAt = Date.now();
    let received = "";
    const closed = new Promise<{ ms: number; received: string }>((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`still open after ${limitMs} ms`));
      }, limitMs);
      socket.on("data", (chunk) => {
        received += chunk;
      });
      socket.on("close", () => {
        clearTimeout(timer);
        resolve({ ms: Date.now() - startedAt, received });
      });
    });
    closed.catch(() => {});
    socket.on("error", () => {});
    socket.once("connect", () => resolveOpen({ socket, closed }));
    socket.once("error", rejectOpen);
  });
}

describe("connection time bounds", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ connections: BOUNDS });
  });
  afterAll(async () => {
    await t.close();
  });

  it("closes a connection that never sends a request within the headers bound", async () => {
    const { closed } = await watch(t.server.url);
    const { ms } = await closed;
    expect(ms).toBeGreaterThanOrEqual(BOUNDS.headersTimeoutMs - 100);
    expect(ms).toBeLessThan(BOUNDS.headersTimeoutMs + SLACK_MS);
  });

  it("cuts a request whose headers never finish within the headers bound", async () => {
    const { socket, closed } = await watch(t.server.url);
    socket.write("GET /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nx-slow: ");
    const { ms, received } = await closed;
    expect(ms).toBeLessThan(BOUNDS.headersTimeoutMs + SLACK_MS);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("cuts a request whose body never finishes within the request bound", async () => {
    const { socket, closed } = await watch(t.server.url);
    socket.write(
      "POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `x-api-key: ${TEST_API_KEY}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"name":`,
    );
    const { ms, received } = await closed;
    expect(ms).toBeLessThan(BOUNDS.requestTimeoutMs + SLACK_MS);
    expect(received).not.toMatch(/^HTTP\/1\.1 2/);
  });

  it("closes a kept-alive connection idle past the keep-alive bound", async () => {
    const { socket, closed } = await watch(t.server.url);
    socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const { ms, received } = await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    expect(ms).toBeLessThan(BOUNDS.keepAliveTimeoutMs + SLACK_MS);
  });

  it("keeps an event stream open past every bound, still delivering", async () => {
    const { session } = await createSession(t.client);
    const reader = await StreamReader.open(t.client, session.id);
    try {
      const wait = BOUNDS.requestTimeoutMs + BOUNDS.keepAliveTimeoutMs + SLACK_MS;
      await new Promise((resolve) => setTimeout(resolve, wait));
      expect(reader.ended).toBe(false);
      await t.client.beta.sessions.events.send(session.id, { events: [userMessage("still there?")] });
      await reader.until((event) => isEndTurnIdle(event), { timeoutMs: 15_000 });
      expect(reader.error).toBeNull();
    } finally {
      await reader.close();
    }
  });
});

describe("connection count bounds", () => {
  const CAP = 3;
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ connections: { maxConnectionsPerAddress: CAP } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("refuses connections from an address over its cap, while its open ones keep working", async () => {
    const held = await Promise.all(Array.from({ length: CAP }, () => watch(t.server.url)));
    try {
      const over = await watch(t.server.url);
      over.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      const refused = await over.closed;
      expect(refused.received).toBe("");

      // A request on a connection already held is answered.
      const first = held[0]!;
      const answered = new Promise<string>((resolve) => {
        let text = "";
        first.socket.on("data", (chunk) => {
          text += chunk;
          if (text.includes("\r\n\r\n")) resolve(text);
        });
      });
      first.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      expect(await answered).toMatch(/^HTTP\/1\.1 200 /);
    } finally {
      for (const { socket } of held) socket.destroy();
    }
    // Once they are closed, the address may connect again.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await sendRawHttp(
      t.server.url,
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    );
    expect(again.status).toBe(200);
  });
});

describe("the total connection cap", () => {
  const TOTAL = 2;
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ connections: { maxConnections: TOTAL } });
  });
  afterAll(async () => {
    await t.close();
  });

  it("drops connections over the total cap as they arrive", async () => {
    const held = await Promise.all(Array.from({ length: TOTAL }, () => watch(t.server.url)));
    try {
      const over = await watch(t.server.url);
      over.socket.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      expect((await over.closed).received).toBe("");
    } finally {
      for (const { socket } of held) socket.destroy();
    }
  });
});
