/**
 * The MCP server a harness finds its agent's own tools on: the agent's custom tools and its MCP
 * toolsets' tools, listed as the native loop offers them to a model. It holds no run state: a call
 * goes to whichever follower of the harness is listening, which commits it as the native loop
 * would (custom: the client's to answer; MCP: through the gate) and answers from what is committed.
 * It listens on a unix socket in the sandbox's private directory, never on a network.
 */
import { createServer, type Server as NetServer, type Socket } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { CatalogEntry } from "../toolCatalog.js";

/** The server's name in the harness's session: its tools show as `mcp__awaken__<tool>` in most. */
export const TOOL_SERVER_NAME = "awaken";

export type ToolCallHandler = (name: string, input: Record<string, unknown>) => Promise<CallToolResult>;

/** What a call gets while no run follows the harness (a second call made beside a parked one). */
const NOT_NOW =
  "Awaken's tools answer one call at a time: another call of yours is waiting for its answer. Call this again once it has one.";

export class HarnessToolServer {
  readonly listener: NetServer;
  /** The follower that commits and answers calls; null between runs. */
  handler: ToolCallHandler | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(readonly tools: readonly Tool[]) {
    this.listener = createServer((socket) => this.serve(socket));
  }

  /** The catalog's tools the harness is offered: custom tools and MCP toolsets' tools (built-in ones are its own). */
  static offered(catalog: ReadonlyMap<string, CatalogEntry>): Tool[] {
    const tools: Tool[] = [];
    for (const entry of catalog.values()) {
      if (entry.kind !== "custom" && entry.kind !== "mcp") continue;
      tools.push({
        name: entry.spec.name,
        ...(entry.spec.description ? { description: entry.spec.description } : {}),
        inputSchema: { type: "object", ...(entry.spec.input_schema as Record<string, unknown>) },
      });
    }
    return tools;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("error", () => socket.destroy());
    const server = new Server({ name: TOOL_SERVER_NAME, version: "1" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...this.tools] }));
    server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
      const { name } = request.params;
      if (!this.tools.some((tool) => tool.name === name))
        return failed(`There is no tool named ${JSON.stringify(name).slice(0, 200)} here.`);
      const handler = this.handler;
      if (!handler) return failed(NOT_NOW);
      this.handler = null;
      return handler(name, request.params.arguments ?? {});
    });
    socket.once("close", () => {
      this.sockets.delete(socket);
      void server.close().catch(() => undefined);
    });
    void server.connect(new StdioServerTransport(socket, socket)).catch(() => socket.destroy());
  }
}

export function failed(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
