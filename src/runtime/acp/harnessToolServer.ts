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

/** How many calls may wait for a run to take them (a harness calling several tools at once). */
const MAX_WAITING = 16;

interface WaitingCall {
  name: string;
  input: Record<string, unknown>;
  answer(result: CallToolResult): void;
}

export class HarnessToolServer {
  readonly listener: NetServer;
  /** The follower that takes the next call; null between runs and once it took one. */
  private handler: ToolCallHandler | null = null;
  /** Calls made while no follower listens (beside one the run is carrying out), oldest first. */
  private readonly waiting: WaitingCall[] = [];
  private readonly sockets = new Set<Socket>();

  constructor(readonly tools: readonly Tool[]) {
    this.listener = createServer((socket) => this.serve(socket));
  }

  /**
   * Hands the next call to `handler`, one call only: the oldest waiting one at once, else the next
   * made. Returns what withdraws the handler if it has not taken a call yet. Calls are thus carried
   * out one after another, each by a run, as a harness calling several at once expects.
   */
  listen(handler: ToolCallHandler): () => void {
    const next = this.waiting.shift();
    if (next) {
      void take(handler, next.name, next.input).then(next.answer);
      return () => undefined;
    }
    this.handler = handler;
    return () => {
      if (this.handler === handler) this.handler = null;
    };
  }

  /** Answers every waiting call with `text` as an error (the turn ended under them). */
  cancelWaiting(text: string): void {
    for (const call of this.waiting.splice(0)) call.answer(failed(text));
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
    this.cancelWaiting("The harness is being stopped.");
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
      const input = request.params.arguments ?? {};
      const handler = this.handler;
      if (handler) {
        this.handler = null;
        return take(handler, name, input);
      }
      if (this.waiting.length >= MAX_WAITING)
        return failed(
          `More than ${MAX_WAITING} calls of these tools are waiting; call this again once some have answers.`,
        );
      return new Promise<CallToolResult>((answer) => this.waiting.push({ name, input, answer }));
    });
    socket.once("close", () => {
      this.sockets.delete(socket);
      void server.close().catch(() => undefined);
    });
    void server.connect(new StdioServerTransport(socket, socket)).catch(() => socket.destroy());
  }
}

/** A handler's answer; never a rejection (the MCP call gets an error result instead). */
function take(
  handler: ToolCallHandler,
  name: string,
  input: Record<string, unknown>,
): Promise<CallToolResult> {
  return handler(name, input).catch(() => failed("The call could not be recorded; it did not run."));
}

export function failed(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}
