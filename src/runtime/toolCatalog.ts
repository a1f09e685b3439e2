import type { AgentDefinition, McpServer, PermissionPolicy } from "../control/agentDefinition.js";
import type { EnvironmentConfig } from "../coordinator/environmentConfig.js";
import type { ModelToolSpec } from "../providers/ports.js";
import { HAND_TOOLS, type HandTool, type HandToolResult } from "./hand/index.js";
import type { McpToolInfo } from "./mcp/mcpSessions.js";

export type CatalogEntry =
  | { kind: "custom"; spec: ModelToolSpec }
  | {
      kind: "hand";
      spec: ModelToolSpec;
      tool: HandTool;
      policy: PermissionPolicy;
      /** `server`: this worker runs it in the sandbox (cloud); `client`: a self-hosted worker does. */
      runsOn: "server" | "client";
    }
  | {
      /**
       * A tool the runtime answers itself, without a sandbox, from the run's resources (skills and
       * memory stores when there is no sandbox to mount them in). Added once they are realized.
       */
      kind: "runtime";
      spec: ModelToolSpec;
      tool: RuntimeTool;
      policy: PermissionPolicy;
      runsOn: "server";
    }
  | {
      kind: "mcp";
      spec: ModelToolSpec;
      /** The agent's name for the server (`mcp_server_name`) and the tool's own name there. */
      server: string;
      tool: string;
      policy: PermissionPolicy;
      /** Re-run after a crash only when the server annotates the tool `idempotentHint: true`. */
      repeatable: boolean;
    };

/** A tool the runtime runs in process (no sandbox): its answer comes from the run's resources. */
export interface RuntimeTool {
  spec: ModelToolSpec;
  /** Running it twice has the same effect as running it once. */
  repeatable: boolean;
  run(input: Record<string, unknown>, signal: AbortSignal): Promise<HandToolResult>;
}

/** Adds runtime tools, always allowed (they read and write only the session's own resources). */
export function addRuntimeTools(catalog: Map<string, CatalogEntry>, tools: readonly RuntimeTool[]): void {
  for (const tool of tools) {
    if (catalog.has(tool.spec.name)) continue;
    catalog.set(tool.spec.name, {
      kind: "runtime",
      spec: tool.spec,
      tool,
      policy: { type: "always_allow" },
      runsOn: "server",
    });
  }
}

/**
 * The tools a run offers the model, decided from the pinned agent version and environment revision
 * alone, and who runs each: the client (custom tools; built-in tools of a self_hosted environment)
 * or this server inside the sandbox (built-in tools of a cloud environment). Every built-in call
 * passes the permission gate with the policy recorded here. A name outside the catalog in a
 * response is handed to the client like a custom tool (its runner answers "unknown tool"); the
 * server never runs anything it did not offer.
 */
export function toolCatalog(
  agent: AgentDefinition,
  environment: EnvironmentConfig,
): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>();
  const runsOn = environment.type === "cloud" ? "server" : "client";
  for (const tool of agent.tools) {
    if (tool.type === "custom") {
      catalog.set(tool.name, {
        kind: "custom",
        spec: { name: tool.name, description: tool.description, input_schema: tool.input_schema },
      });
    } else if (tool.type === "agent_toolset_20260401") {
      for (const [name, hand] of HAND_TOOLS) {
        const config = tool.configs.find((c) => c.name === name) ?? tool.default_config;
        if (!config.enabled) continue;
        catalog.set(name, {
          kind: "hand",
          spec: hand.spec,
          tool: hand,
          policy: config.permission_policy,
          runsOn,
        });
      }
    }
  }
  return catalog;
}

/** The MCP servers a run connects to: those an enabled `mcp_toolset` of the agent refers to. */
export function mcpServersOf(agent: AgentDefinition): McpServer[] {
  const named = new Set(agent.tools.flatMap((t) => (t.type === "mcp_toolset" ? [t.mcp_server_name] : [])));
  return agent.mcp_servers.filter((server) => named.has(server.name));
}

/**
 * Adds one server's listed tools to the catalog under the toolset's policies (a tool's own config,
 * else the toolset default; disabled tools are not offered). The model sees each tool under its
 * own MCP name, as `agent.mcp_tool_use.name` carries it; a name another tool already holds is not
 * offered (returned, so the caller can say so) rather than renamed behind the model's back.
 */
export function addMcpTools(
  catalog: Map<string, CatalogEntry>,
  agent: AgentDefinition,
  server: string,
  tools: readonly McpToolInfo[],
): string[] {
  const skipped: string[] = [];
  const toolset = agent.tools.find((t) => t.type === "mcp_toolset" && t.mcp_server_name === server);
  if (toolset?.type !== "mcp_toolset") return skipped;
  for (const tool of tools) {
    const config = toolset.configs.find((c) => c.name === tool.name) ?? toolset.default_config;
    if (!config.enabled) continue;
    if (catalog.has(tool.name)) {
      skipped.push(tool.name);
      continue;
    }
    catalog.set(tool.name, {
      kind: "mcp",
      spec: {
        name: tool.name,
        description: tool.description ?? "",
        input_schema: tool.inputSchema as ModelToolSpec["input_schema"],
      },
      server,
      tool: tool.name,
      policy: config.permission_policy,
      repeatable: tool.idempotent,
    });
  }
  return skipped;
}
