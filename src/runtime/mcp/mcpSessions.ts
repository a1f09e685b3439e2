/**
 * The MCP holder: one connection per MCP server a run needs, made with the official client, over
 * Streamable HTTP for a URL server or over the pipes of a stdio server's process in the session's
 * sandbox. An HTTP connection is the last-mile holder of its server's pinned credential: the bearer
 * is opened (after admission) for that connection only, turned into its `Authorization` header,
 * and the Buffer is zeroed at once. Nothing here persists anything.
 */

import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServer, StdioMcpServer, UrlMcpServer } from "../../control/agentDefinition.js";
import type { CredentialOpening } from "../../coordinator/ports.js";
import { PlatformError } from "../../kernel/errors.js";
import type { JsonObject } from "../../kernel/json.js";
import { type Outbound, outboundRefusalOf } from "../../kernel/outboundConnector.js";
import { scrub } from "../../kernel/secretScrub.js";
import type { SandboxProcess } from "../../sandbox/ports.js";
import { SandboxStdioTransport } from "./sandboxStdioTransport.js";

export type McpErrorType = "mcp_connection_failed_error" | "mcp_authentication_failed_error";

/** A server the run cannot use: surfaces as `session.error` with `mcp_server_name`. */
export class McpServerFailure extends PlatformError<McpErrorType> {
  constructor(
    readonly type: McpErrorType,
    readonly serverName: string,
    message: string,
  ) {
    super(type, message);
    this.name = "McpServerFailure";
  }
}

/** The run lost its claim while connecting: nothing may be opened or written any more. */
export class McpConnectAborted extends Error {}

export interface McpToolInfo {
  name: string;
  description: string | undefined;
  inputSchema: JsonObject;
  /** The server says calling it twice has no further effect (`annotations.idempotentHint`). */
  idempotent: boolean;
}

export interface McpCallOutcome {
  content: JsonObject[];
  isError: boolean;
}

interface Connection {
  client: Client;
  tools: McpToolInfo[];
}

/** How a connection gets its server's credential: the runtime's custody port, scoped to one run. */
export type McpCredentialSource = (server: UrlMcpServer) => Promise<CredentialOpening>;

/** A stdio server's process, started in the session's sandbox with its variables. */
export interface LaunchedProcess {
  process: SandboxProcess;
  /** The secret values it was given: its stderr is scrubbed of them before any of it is shown. */
  secrets: string[];
}
/** Starts a stdio server (the run's sandbox and its vault secrets). Throws `McpServerFailure`. */
export type McpStdioLauncher = (server: StdioMcpServer) => Promise<LaunchedProcess>;

const noStdio: McpStdioLauncher = async (server) => {
  throw new McpServerFailure(
    "mcp_connection_failed_error",
    server.name,
    `stdio MCP server ${server.name} cannot be started here: no sandbox to start it in`,
  );
};

/** A transport to connect over, and how its failure reads. */
interface OpenedTransport {
  transport: Transport;
  failure(error: unknown): McpServerFailure;
  /** The connection attempt is over (whichever way). */
  connected(): void;
}

/** How much of a stdio server's stderr is kept, and how much a connection failure quotes. */
export const STDERR_BYTES = 4096;
const STDERR_QUOTED_CHARS = 1000;

const CONNECT_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 300_000;

export class McpSessions {
  private readonly connections = new Map<string, Connection>();

  constructor(
    private readonly credential: McpCredentialSource,
    private readonly signal: AbortSignal,
    /** Every connection goes through it: no private address unless the operator allow-listed it. */
    private readonly outbound: Outbound,
    /** Absent: stdio servers cannot be started here (each fails cleanly). */
    private readonly launch: McpStdioLauncher = noStdio,
  ) {}

  /** Connects (once) and lists the server's tools. Throws `McpServerFailure` / `McpConnectAborted`. */
  async connect(server: McpServer): Promise<McpToolInfo[]> {
    const existing = this.connections.get(server.name);
    if (existing) return existing.tools;
    // Never materialize a credential for a run that no longer holds its claim.
    if (this.signal.aborted) throw new McpConnectAborted();
    const opened =
      server.type === "url" ? await this.httpTransport(server) : await this.stdioTransport(server);
    const client = new Client({ name: "awaken-agents", version: "0.1.0" });
    try {
      await client.connect(opened.transport, { signal: this.signal, timeout: CONNECT_TIMEOUT_MS });
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, {
          signal: this.signal,
          timeout: CONNECT_TIMEOUT_MS,
        });
        for (const tool of page.tools) {
          tools.push({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema as JsonObject,
            idempotent: tool.annotations?.idempotentHint === true,
          });
        }
        cursor = page.nextCursor;
      } while (cursor);
      this.connections.set(server.name, { client, tools });
      return tools;
    } catch (error) {
      await client.close().catch(() => {});
      if (this.signal.aborted) throw new McpConnectAborted();
      throw opened.failure(error);
    } finally {
      opened.connected();
    }
  }

  /** The Streamable HTTP transport, its bearer opened (after the address check) for it alone. */
  private async httpTransport(server: UrlMcpServer): Promise<OpenedTransport> {
    // A forbidden address is refused before its credential is opened; the connection checks again.
    const refused = await this.outbound.admit(server.url);
    if (refused) throw notAllowed(server, refused.message);
    const opening = await this.credential(server);
    let authorization: string | null = null;
    if (opening.kind === "refused") {
      throw new McpServerFailure(
        "mcp_authentication_failed_error",
        server.name,
        `the credential pinned for MCP server ${server.name} (${opening.credentialId}, revision ${opening.revision}) was refused: ${opening.reason}`,
      );
    }
    if (opening.kind === "bearer") {
      try {
        if (this.signal.aborted) throw new McpConnectAborted();
        authorization = `Bearer ${opening.token.toString("utf8")}`;
      } finally {
        opening.token.fill(0);
      }
    }
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: authorization ? { headers: { Authorization: authorization } } : {},
      fetch: this.outbound.fetch,
    });
    authorization = null;
    return {
      transport,
      failure: (error) => classify(server, error, opening.kind === "bearer"),
      connected: () => {},
    };
  }

  /** The server's process, started in the session's sandbox, and a transport over its pipes. */
  private async stdioTransport(server: StdioMcpServer): Promise<OpenedTransport> {
    let launched: LaunchedProcess | null = await this.launch(server);
    const { process } = launched;
    return {
      transport: new SandboxStdioTransport(process),
      failure: (error) => stdioFailure(server, error, process, launched?.secrets ?? []),
      // Its secrets were kept only to scrub its stderr from a connection failure.
      connected: () => {
        launched = null;
      },
    };
  }

  async call(serverName: string, tool: string, input: JsonObject): Promise<McpCallOutcome> {
    const connection = this.connections.get(serverName);
    if (!connection) throw new Error(`MCP server ${serverName} is not connected`);
    const result = await connection.client.callTool({ name: tool, arguments: input }, undefined, {
      signal: this.signal,
      timeout: CALL_TIMEOUT_MS,
    });
    const content = Array.isArray(result.content) ? (result.content as JsonObject[]) : [];
    return { content: content.map(resultBlock), isError: result.isError === true };
  }

  async close(): Promise<void> {
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(all.map((c) => c.client.close().catch(() => {})));
  }
}

/** Text blocks pass as they are; anything else is described in text (the model reads text). */
function resultBlock(block: JsonObject): JsonObject {
  if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
  if (block.type === "resource" && typeof block.resource === "object" && block.resource !== null) {
    const resource = block.resource as JsonObject;
    if (typeof resource.text === "string") return { type: "text", text: resource.text };
  }
  return { type: "text", text: `[${String(block.type ?? "unknown")} content omitted]` };
}

function notAllowed(server: UrlMcpServer, message: string): McpServerFailure {
  return new McpServerFailure(
    "mcp_connection_failed_error",
    server.name,
    `MCP server ${server.name} at ${server.url} is not allowed: ${message}`,
  );
}

function classify(server: UrlMcpServer, error: unknown, hadCredential: boolean): McpServerFailure {
  const refusal = outboundRefusalOf(error);
  if (refusal) return notAllowed(server, refusal.message);
  const message = error instanceof Error ? error.message : String(error);
  const status = error instanceof StreamableHTTPError ? error.code : undefined;
  if (error instanceof UnauthorizedError || status === 401 || status === 403) {
    return new McpServerFailure(
      "mcp_authentication_failed_error",
      server.name,
      hadCredential
        ? `MCP server ${server.name} rejected the pinned credential (HTTP ${status ?? 401})`
        : `MCP server ${server.name} requires authentication (HTTP ${status ?? 401}) and the session pinned no credential for ${server.url}; attach a vault with a credential for that URL`,
    );
  }
  return new McpServerFailure(
    "mcp_connection_failed_error",
    server.name,
    `could not connect to MCP server ${server.name} at ${server.url}: ${message}`,
  );
}

/**
 * A stdio server that did not come up: what the client saw, its exit code if it exited, and the
 * end of its stderr, scrubbed of every secret it was given (it may print its environment).
 */
function stdioFailure(
  server: StdioMcpServer,
  error: unknown,
  process: SandboxProcess,
  secrets: readonly string[],
): McpServerFailure {
  const message = error instanceof Error ? error.message : String(error);
  const stderr = scrub(process.stderrTail(), secrets).trim().slice(-STDERR_QUOTED_CHARS);
  return new McpServerFailure(
    "mcp_connection_failed_error",
    server.name,
    `could not connect to stdio MCP server ${server.name} (${server.command}): ${scrub(message, secrets)}` +
      (stderr ? `; its stderr ends with: ${stderr}` : ""),
  );
}
