import type { FastifyInstance } from "fastify";

/**
 * The methods each registered path answers, so a known path asked with another method is a 405
 * with an `Allow` header instead of a 404. Fed by Fastify's `onRoute` hook, which sees every
 * route of every plugin registered after it.
 */
export class RouteMethods {
  private readonly routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();

  /** Records every route `app` (and the plugins it registers later) declares. */
  static track(app: FastifyInstance): RouteMethods {
    const table = new RouteMethods();
    app.addHook("onRoute", (route) => table.add(route.url, route.method));
    return table;
  }

  add(url: string, method: string | readonly string[]): void {
    const entry = this.routes.get(url) ?? { pattern: patternOf(url), methods: new Set<string>() };
    for (const m of typeof method === "string" ? [method] : method) {
      entry.methods.add(m.toUpperCase());
      // Fastify answers HEAD for every GET route (exposeHeadRoutes).
      if (m.toUpperCase() === "GET") entry.methods.add("HEAD");
    }
    this.routes.set(url, entry);
  }

  /** The methods some route accepts at `path` (no query string), sorted; empty when none matches. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const { pattern, methods: declared } of this.routes.values()) {
      if (pattern.test(path)) for (const m of declared) methods.add(m);
    }
    return [...methods].sort();
  }
}

/** `/v1/sessions/:id/events` → a regex matching one non-empty segment per parameter. */
function patternOf(url: string): RegExp {
  const segments = url.split("/").map((segment) => {
    if (segment.startsWith(":")) return "[^/]+";
    if (segment === "*") return ".*";
    return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  });
  return new RegExp(`^${segments.join("/")}$`);
}
