import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import type { EdgeServices } from "../../src/edge/http/edgeServices.js";
import { managedAgentsEdge } from "../../src/edge/managed-agents/managedAgentsEdge.js";
import { managedRouteRole } from "../../src/edge/managed-agents/routeRoles.js";

describe("the role each Managed route needs", () => {
  it("places every route the edge registers: sessions, models, files, memory, dreams and the hint streams runtime, authoring builder, keys admin", async () => {
    const app = Fastify();
    const routes: string[] = [];
    app.addHook("onRoute", (route) => {
      routes.push(route.url);
    });
    managedAgentsEdge.register(app, {} as EdgeServices);
    await app.ready();
    expect(routes.length).toBeGreaterThan(40);
    for (const url of routes) {
      const runtime =
        /^\/v1\/(sessions|models|files|memory_stores|deployment_runs|dreams|awaken\/access_tokens)/.test(
          url,
        ) ||
        /^\/v1\/awaken\/(sessions|approvals)\/stream$/.test(url) ||
        /^\/v1\/awaken\/sessions\/:session_id\/resource_usage$/.test(url) ||
        /^\/v1\/awaken\/sessions\/:session_id\/harness$/.test(url) ||
        /^\/v1\/awaken\/(sessions\/outcomes|overview)$/.test(url);
      const expected = runtime
        ? "runtime"
        : /^\/v1\/(agents|environments|vaults|skills|deployments)/.test(url)
          ? "builder"
          : "admin";
      expect(managedRouteRole(url), url).toBe(expected);
    }
    // Admin-only: Awaken's operator extensions, and user profiles (data subjects whose delete erases content).
    expect(
      // Admin only: Awaken's extensions, MCP tunnels (their tokens open a private network), user
      // profiles (a delete erases content, as the erasure route does) and webhook endpoints (the SDK's
      // organization API).
      routes
        .filter((url) => managedRouteRole(url) === "admin")
        .every(
          (url) =>
            url.startsWith("/v1/awaken/") ||
            url.startsWith("/v1/tunnels") ||
            url.startsWith("/v1/user_profiles") ||
            url.startsWith("/v1/organizations/webhooks"),
        ),
    ).toBe(true);
    await app.close();
  });

  it("fails closed: a pattern it does not name needs an admin key; prefixes match whole segments", () => {
    expect(managedRouteRole("/v1/new-thing")).toBe("admin");
    expect(managedRouteRole("/v1/sessionsx")).toBe("admin");
    expect(managedRouteRole("/v1/sessions")).toBe("runtime");
    expect(managedRouteRole("/v1/sessions/:id/events")).toBe("runtime");
    expect(managedRouteRole("/v1/awaken/approvals/stream")).toBe("runtime");
    expect(managedRouteRole("/v1/awaken/approvals/streamx")).toBe("admin");
    expect(managedRouteRole("/v1/awaken/approvals")).toBe("admin");
    expect(managedRouteRole("/v1/awaken/access_tokens")).toBe("runtime");
    expect(managedRouteRole("/v1/awaken/access_tokensx")).toBe("admin");
    expect(managedRouteRole("/v1/awaken/api_keys")).toBe("admin");
    expect(managedRouteRole("/v1/awaken/sessions/stream")).toBe("runtime");
    expect(managedRouteRole("/v1/awaken/sessions/streamx")).toBe("admin");
    expect(managedRouteRole("/v1/awaken/sessions")).toBe("admin");
    expect(managedRouteRole("/v1/awaken/audit")).toBe("admin");
    // Deployments are authored (a schedule starts sessions unattended); their runs are read like sessions.
    expect(managedRouteRole("/v1/deployments/:deployment_id/run")).toBe("builder");
    expect(managedRouteRole("/v1/deployment_runs")).toBe("runtime");
  });

  it("registers the admin audit read, and only for admin keys", async () => {
    const app = Fastify();
    const routes: string[] = [];
    app.addHook("onRoute", (route) => {
      routes.push(`${route.method} ${route.url}`);
    });
    managedAgentsEdge.register(app, {} as EdgeServices);
    await app.ready();
    expect(routes).toContain("GET /v1/awaken/audit");
    expect(managedRouteRole("/v1/awaken/audit")).toBe("admin");
    await app.close();
  });
});
