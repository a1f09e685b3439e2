import { randomUUID } from "node:crypto";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { principalKey, principalOf } from "../http/auth.js";
import { credentialLifetime } from "../http/credentialLifetime.js";
import type { EdgeServices } from "../http/edgeServices.js";
import { servicesFor } from "../http/scopedServices.js";
import { agentToolServer, notifyIfToolsChanged } from "./agentToolServer.js";
import { listAgentTools, toolListFingerprint } from "./agentTools.js";
import { jsonRpcError } from "./mcpErrors.js";
import { DEFAULT_MCP_SESSION_LIMITS, type McpSession, McpSessionRegistry } from "./mcpSessions.js";

export const MCP_PATH = "/v1/mcp";
const SESSION_HEADER = "mcp-session-id";
/** The MCP SDK's code for a session id the server does not hold (the client then re-initializes). */
const SESSION_NOT_FOUND = -32001;
const SERVER_ERROR = -32000;

/**
 * `/v1/mcp`: MCP over Streamable HTTP (POST messages, GET the server's stream, DELETE the
 * session), served by the MCP SDK's transport on the raw request after the scope authenticated
 * it. An `initialize` without a session id opens an MCP session of the key's workspace; every
 * other request names one, and a session of another workspace, or of another replica, is the
 * spec's 404 (the client initializes again). The tool list is re-checked on the stream keep-alive
 * cadence, so a client holding a GET stream hears `tools/list_changed` when an agent is created,
 * renamed or archived.
 */
export function mcpRoutes(app: FastifyInstance, services: EdgeServices): void {
  const registry = new McpSessionRegistry(DEFAULT_MCP_SESSION_LIMITS, () => services.clock.now());
  const watch = setInterval(() => {
    registry.closeIdle();
    void checkToolLists(registry);
  }, services.stream.pingMs);
  watch.unref();
  app.addHook("onClose", async () => {
    clearInterval(watch);
    await registry.closeAll();
  });

  app.route({
    method: ["GET", "POST", "DELETE"],
    url: MCP_PATH,
    handler: async (request, reply) => {
      const principal = principalOf(request);
      const { workspaceId } = principal;
      const owner = principalKey(principal);
      const header = request.headers[SESSION_HEADER];
      const sessionId = typeof header === "string" ? header : undefined;
      if (request.method === "POST" && request.body === undefined) {
        return refuse(reply, 400, -32700, "Parse error: the request body is empty; send a JSON-RPC message.");
      }
      if (sessionId !== undefined) {
        const session = registry.get(sessionId, workspaceId, owner);
        if (!session) {
          return refuse(
            reply,
            404,
            SESSION_NOT_FOUND,
            "Session not found: it ended, or another key opened it; initialize a new one.",
          );
        }
        return serve(request, reply, session.transport);
      }
      if (request.method !== "POST" || !isInitializeRequest(request.body)) {
        return refuse(
          reply,
          400,
          SERVER_ERROR,
          "Bad Request: send Mcp-Session-Id, or initialize a session first (an initialize request without it).",
        );
      }
      if (!registry.admits(workspaceId, owner)) {
        return refuse(
          reply,
          503,
          SERVER_ERROR,
          `This credential already holds ${registry.perPrincipal} MCP sessions on this server, its share of the workspace's; end one (DELETE) or retry later.`,
        );
      }
      const transport = await opened(services, registry, { workspaceId, owner }, request);
      await serve(request, reply, transport);
      // An initialize the transport refused opened no session: nothing is kept of it.
      if (transport.sessionId === undefined) await transport.close();
    },
  });
}

/**
 * A transport for an initialize; its session joins the registry once the SDK names it, and ends
 * (transport closed, session dropped) when the credential that opened it expires or is revoked.
 */
async function opened(
  root: EdgeServices,
  registry: McpSessionRegistry,
  opener: { workspaceId: string; owner: string },
  request: FastifyRequest,
): Promise<StreamableHTTPServerTransport> {
  const services = servicesFor(root, request);
  const state = { ...opener, services, listed: null, ending: false };
  const live = new AbortController();
  const server = agentToolServer(services, state, request.log);
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    keepAliveMs: services.stream.pingMs,
    onsessioninitialized: (id) => {
      const session: McpSession = Object.assign(state, {
        id,
        transport,
        server,
        lastUsedAt: services.clock.now(),
      });
      registry.add(session);
      credentialLifetime(root, request, live.signal).addEventListener("abort", () => {
        void registry.end(id);
      });
    },
    onsessionclosed: (id) => {
      live.abort();
      registry.forget(id);
    },
  });
  transport.onclose = () => {
    live.abort();
    if (transport.sessionId !== undefined) registry.forget(transport.sessionId);
  };
  await server.connect(transport);
  return transport;
}

/** Hands the raw exchange to the SDK's transport; from here on the SDK writes the response. */
async function serve(
  request: FastifyRequest,
  reply: FastifyReply,
  transport: StreamableHTTPServerTransport,
): Promise<void> {
  reply.raw.setHeader("request-id", request.id);
  reply.hijack();
  try {
    await transport.handleRequest(request.raw, reply.raw, request.body);
  } catch (error) {
    request.log.error({ err: error }, "mcp transport failed");
    if (!reply.raw.headersSent) {
      reply.raw.writeHead(500, { "content-type": "application/json" });
      reply.raw.end(JSON.stringify(jsonRpcError(-32603, "Internal error; try again.")));
    } else reply.raw.end();
  }
}

function refuse(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.status(status).type("application/json").send(jsonRpcError(code, message));
}

/**
 * One agent list per watched workspace and scope per tick, however many of its sessions are open
 * (unscoped sessions share the services object; a scoped one lists its own agents).
 */
async function checkToolLists(registry: McpSessionRegistry): Promise<void> {
  for (const [workspaceId, sessions] of registry.watchedWorkspaces()) {
    const byScope = new Map<EdgeServices, McpSession[]>();
    for (const session of sessions)
      byScope.set(session.services, [...(byScope.get(session.services) ?? []), session]);
    for (const [services, group] of byScope) {
      try {
        const current = toolListFingerprint(await listAgentTools(services.agents, workspaceId));
        for (const session of group) {
          await notifyIfToolsChanged(services, session, (n) => session.server.notification(n), current);
        }
      } catch {
        // A failed check (the database is away) is retried on the next tick.
      }
    }
  }
}
