import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface McpCall {
  tool: string;
  args: Record<string, unknown>;
  /** The bearer the request that made the call carried. */
  token: string;
}

export interface BearerMcpServer {
  url: string;
  /** Tokens the server accepts; anything else is answered 401. */
  accepted: Set<string>;
  /** Every bearer presented (including rejected ones), per HTTP request; "" for none. */
  presented: string[];
  calls: McpCall[];
  /** While set, every tool call is recorded and then hangs (until `release()` or close). */
  hold: boolean;
  release(): void;
  close(): Promise<void>;
}

/**
 * A real MCP server made with the official SDK (Streamable HTTP, one transport per MCP session) in
 * the test process, behind a bearer check. Tools: `lookup` (plain) and `counter` (annotated
 * `idempotentHint: true`).
 */
export async function startBearerMcpServer(
  options: { tls?: { key: string; cert: string; host: string; clientCa?: string } } = {},
): Promise<BearerMcpServer> {
  const accepted = new Set<string>();
  const presented: string[] = [];
  const calls: McpCall[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let releaseHeld: () => void = () => {};
  let held = new Promise<void>((resolve) => {
    releaseHeld = resolve;
  });
  const state = { hold: false };
  const gate = async () => {
    if (state.hold) await held;
  };

  const build = (token: string) => {
    const server = new McpServer({ name: "bearer-test", version: "1.0.0" });
    server.registerTool(
      "lookup",
      { description: "Looks a word up", inputSchema: { q: z.string() } },
      async ({ q }) => {
        calls.push({ tool: "lookup", args: { q }, token });
        await gate();
        return { content: [{ type: "text", text: `definition of ${q}` }] };
      },
    );
    server.registerTool(
      "counter",
      {
        description: "Reads a counter",
        inputSchema: { name: z.string() },
        annotations: { idempotentHint: true },
      },
      async ({ name }) => {
        calls.push({ tool: "counter", args: { name }, token });
        await gate();
        return { content: [{ type: "text", text: `${name}=1` }] };
      },
    );
    return server;
  };

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const auth = req.headers.authorization ?? "";
      const token = auth.startsWith("Bearer ") ? auth.slice("Bearer ".length) : "";
      presented.push(token);
      if (!accepted.has(token)) {
        res.writeHead(401, { "www-authenticate": 'Bearer realm="test"' }).end();
        return;
      }
      const body = req.method === "POST" ? JSON.parse(await readBody(req)) : undefined;
      const sessionId = req.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
      if (!transport) {
        if (req.method !== "POST" || !isInitializeRequest(body)) {
          res.writeHead(400).end();
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            transports.set(id, created);
          },
        });
        created.onclose = () => {
          if (created.sessionId) transports.delete(created.sessionId);
        };
        await build(token).connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
  // With `tls`, HTTPS with that certificate (a test CA's), named by `tls.host` in its URL; with
  // `tls.clientCa`, mutual TLS: no connection without a client certificate that CA signed.
  const mutual = options.tls?.clientCa
    ? { requestCert: true, rejectUnauthorized: true, ca: options.tls.clientCa }
    : {};
  const http = options.tls
    ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert, ...mutual }, handler)
    : createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: options.tls ? `https://${options.tls.host}:${port}/mcp` : `http://127.0.0.1:${port}/mcp`,
    accepted,
    presented,
    calls,
    get hold() {
      return state.hold;
    },
    set hold(value: boolean) {
      state.hold = value;
    },
    release: () => {
      state.hold = false;
      releaseHeld();
      held = new Promise<void>((resolve) => {
        releaseHeld = resolve;
      });
    },
    close: async () => {
      releaseHeld();
      await Promise.all([...transports.values()].map((t) => t.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}
