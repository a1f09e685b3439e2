import type { AgentCard, AgentSkill } from "@a2a-js/sdk";
import type { AgentDefinition } from "../../control/agentDefinition.js";

/** The JSON-RPC interface of an agent: the card names it, the route serves it. */
export const interfacePath = (agentId: string): string => `/v1/a2a/agents/${encodeURIComponent(agentId)}`;

const MODES = ["text/plain", "application/json"];

/**
 * The protocol 1.0 card of one agent version: its name and description, a skill per tool, JSON-RPC
 * on one URL for protocol 1.0 and 0.3 (the method names tell them apart), the HTTP+JSON binding
 * below it (`…/rest`), streaming, push notifications when the server delivers them, and how to
 * authenticate (the workspace API key, as a bearer token or an `x-api-key` header).
 */
export function agentCardOf(
  baseUrl: string,
  agentId: string,
  version: number,
  definition: AgentDefinition,
  pushNotifications = false,
): AgentCard {
  const url = `${baseUrl}${interfacePath(agentId)}`;
  return {
    name: definition.name,
    description: definition.description ?? "",
    supportedInterfaces: [
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
      { url: `${url}/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    version: String(version),
    capabilities: { streaming: true, pushNotifications, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: "httpAuthSecurityScheme",
          value: {
            description: "The workspace API key as a bearer token.",
            scheme: "bearer",
            bearerFormat: "",
          },
        },
      },
      apiKey: {
        scheme: {
          $case: "apiKeySecurityScheme",
          value: { description: "The workspace API key.", location: "header", name: "x-api-key" },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }],
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: skillsOf(definition),
    signatures: [],
  };
}

/** A skill per tool the agent can use: its own (custom) tools, each built-in tool, each MCP server. */
function skillsOf(definition: AgentDefinition): AgentSkill[] {
  return definition.tools.flatMap((tool): AgentSkill[] => {
    if (tool.type === "custom") return [skill(tool.name, tool.name, tool.description, ["client-tool"])];
    if (tool.type === "mcp_toolset") {
      return [skill(`mcp:${tool.mcp_server_name}`, tool.mcp_server_name, "Tools of an MCP server.", ["mcp"])];
    }
    return tool.configs
      .filter((config) => config.enabled)
      .map((config) => skill(config.name, config.name, `The built-in ${config.name} tool.`, ["built-in"]));
  });
}

function skill(id: string, name: string, description: string, tags: string[]): AgentSkill {
  return {
    id,
    name,
    description,
    tags,
    examples: [],
    inputModes: MODES,
    outputModes: MODES,
    securityRequirements: [],
  };
}
