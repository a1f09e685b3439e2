/**
 * The browser test page (test/browser/chatPage), bundled with esbuild at test time and served on
 * the loopback together with a reverse proxy of `/v1/*` to the Awaken server under test, so the page
 * and the API share one origin and no CORS is involved. Proxied responses stream through as they
 * arrive (SSE must not be buffered).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  request,
  type ServerResponse,
} from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream";
import { fileURLToPath } from "node:url";
import { build, stop } from "esbuild";

const PAGE_DIR = fileURLToPath(new URL("../browser/chatPage/", import.meta.url));

export interface ChatPageServer {
  /** The page's origin, e.g. `http://127.0.0.1:PORT`; the page itself is at `/`. */
  url: string;
  /** The page URL for a workspace API key, an agent id and an environment id (read from its query). */
  pageUrl(query: { key: string; agent: string; environment?: string }): string;
  close(): Promise<void>;
}

// Per RFC 9110 §7.6.1 these describe one hop and are never forwarded.
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
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (!HOP_BY_HOP.has(name)) kept[name] = value;
  return kept;
}

/**
 * Which AI SDK the page is built with: `ai` 6 with `@ai-sdk/react` 3, or `ai` 7 with `@ai-sdk/react`
 * 4 (installed under the npm aliases `ai-v7` and `@ai-sdk/react-v4`; the alias also points the hook's
 * own `ai` import at 7, so the page holds one copy).
 */
export type ChatPageAiSdk = 6 | 7;

const ALIASES: Record<ChatPageAiSdk, Record<string, string>> = {
  6: {},
  7: { ai: "ai-v7", "@ai-sdk/react": "@ai-sdk/react-v4" },
};

/** Bundles the page into a fresh directory under TMPDIR: index.html and main.js. */
async function buildPage(aiSdk: ChatPageAiSdk): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), "awaken-chat-page-"));
  try {
    await build({
      entryPoints: [join(PAGE_DIR, "main.tsx")],
      tsconfig: join(PAGE_DIR, "tsconfig.json"),
      outfile: join(outDir, "main.js"),
      bundle: true,
      alias: ALIASES[aiSdk],
      format: "esm",
      platform: "browser",
      target: "es2022",
      jsx: "automatic",
      define: { "process.env.NODE_ENV": '"production"' },
      sourcemap: "inline",
      logLevel: "silent",
    });
    copyFileSync(join(PAGE_DIR, "index.html"), join(outDir, "index.html"));
  } catch (error) {
    rmSync(outDir, { recursive: true, force: true });
    throw error;
  } finally {
    // The build runs in a long-lived esbuild child process; end it rather than leave it to the worker's exit.
    await stop();
  }
  return outDir;
}

/** Serves the page and proxies `/v1/*` to `target` (the Awaken server's base URL). */
export async function startChatPageServer(target: string, aiSdk: ChatPageAiSdk = 6): Promise<ChatPageServer> {
  const outDir = await buildPage(aiSdk);
  const files: Record<string, { type: string; body: Buffer }> = {
    "/": { type: "text/html; charset=utf-8", body: readFileSync(join(outDir, "index.html")) },
    "/main.js": { type: "text/javascript; charset=utf-8", body: readFileSync(join(outDir, "main.js")) },
  };
  const upstream = new URL(target);
  // Its own agent, so close() can drop the sockets it keeps open to the server under test.
  const agent = new Agent({ keepAlive: false });

  function proxy(req: IncomingMessage, res: ServerResponse): void {
    const outgoing = request(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...endToEnd(req.headers), host: upstream.host },
        agent,
      },
      (incoming) => {
        res.writeHead(incoming.statusCode ?? 502, endToEnd(incoming.headers));
        res.flushHeaders();
        // pipeline forwards each chunk as it arrives and tears both sides down when either ends early.
        pipeline(incoming, res, () => {});
      },
    );
    outgoing.on("error", (error) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain; charset=utf-8" });
        res.end(`chat page proxy: ${error.message}`);
      } else {
        res.destroy();
      }
    });
    // The browser aborting (chat.stop(), page closed) must reach the server as a closed socket.
    res.on("close", () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    pipeline(req, outgoing, () => {});
  }

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://page").pathname;
    if (path.startsWith("/v1/")) {
      proxy(req, res);
      return;
    }
    if (path === "/favicon.ico") {
      // Browsers ask for it on their own; an empty answer keeps a 404 out of the page's console.
      res.writeHead(204);
      res.end();
      return;
    }
    const file = req.method === "GET" ? files[path] : undefined;
    if (!file) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end(`chat page server: no ${req.method} ${path}`);
      return;
    }
    res.writeHead(200, { "content-type": file.type, "cache-control": "no-store" });
    res.end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    pageUrl: (query) => {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
      return `${url}/?${params.toString()}`;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
      rmSync(outDir, { recursive: true, force: true });
    },
  };
}
