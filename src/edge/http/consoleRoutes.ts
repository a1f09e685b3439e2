import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ConsoleAssets } from "./consoleAssets.js";

/**
 * The Console's static files at `/console`, on every replica that serves the API. No
 * authentication: the page holds nothing but code, and signs in with an API key against the same
 * public API. Hashed assets are cached for good, index.html never; the CSP allows this origin's
 * scripts only.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const IMMUTABLE = "public, max-age=31536000, immutable";

function secureHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header("content-security-policy", CONSOLE_CSP)
    .header("x-content-type-options", "nosniff")
    .header("referrer-policy", "no-referrer")
    .header("x-frame-options", "DENY");
}

/**
 * index.html for any client route under the Console, with a relative `<base>` that names the
 * Console's root from this depth: the page then finds its assets and the API under whatever path
 * prefix a reverse proxy mounts it.
 */
export function indexFor(index: string, routePath: string): string {
  const depth = routePath.split("/").length - 1;
  const base = depth === 0 ? "./" : "../".repeat(depth);
  return index.replace("<head>", `<head>\n    <base href="${base}" />`);
}

export function consoleRoutes(app: FastifyInstance, assets: ConsoleAssets | null): void {
  // A person who opens the server's address in a browser lands on the Console; an API client asking
  // for `/` still gets the API's JSON 404.
  app.get("/", async (request, reply) =>
    /\btext\/html\b/.test(String(request.headers.accept ?? ""))
      ? reply.header("cache-control", "no-store").redirect("console/", 303)
      : reply.callNotFound(),
  );
  // Relative, so it stays under a proxy's prefix: `/console` → `/console/`.
  app.get("/console", async (_request, reply) => reply.redirect("console/", 308));
  app.get("/console/*", async (request: FastifyRequest<{ Params: { "*": string } }>, reply) => {
    secureHeaders(reply);
    if (!assets) {
      return reply
        .status(503)
        .header("cache-control", "no-store")
        .type("text/plain; charset=utf-8")
        .send("The Console is not built: run `npm run build`, then restart the server.\n");
    }
    const path = request.params["*"];
    if (path.startsWith("assets/")) {
      const file = assets.files.get(path.slice("assets/".length));
      if (!file) {
        return reply
          .status(404)
          .header("cache-control", "no-store")
          .type("text/plain; charset=utf-8")
          .send("No such Console asset.\n");
      }
      reply.header("cache-control", IMMUTABLE).header("vary", "accept-encoding").type(file.type);
      const acceptsGzip = /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""));
      const gzip = acceptsGzip ? file.gzip() : null;
      if (gzip) return reply.header("content-encoding", "gzip").send(gzip);
      return reply.send(file.body);
    }
    return reply
      .header("cache-control", "no-cache")
      .type("text/html; charset=utf-8")
      .send(indexFor(assets.index, path));
  });
}
