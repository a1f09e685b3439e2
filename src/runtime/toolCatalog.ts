import type { AgentDefinition, PermissionPolicy } from "../control/agentDefinition.js";
import type { EnvironmentConfig } from "../coordinator/environmentConfig.js";
import type { ModelToolSpec } from "../providers/ports.js";
import { HAND_TOOLS, type HandTool } from "./handTools.js";

export type CatalogEntry =
  | { kind: "custom"; spec: ModelToolSpec }
  | { kind: "hand"; spec: ModelToolSpec; tool: HandTool; policy: PermissionPolicy };

/**
 * The tools a run offers the model, decided from the pinned agent version and environment revision
 * alone, and who runs each: the client (custom tools) or this server inside the sandbox (Hand
 * tools). A name outside the catalog in a response is handed to the client like a custom tool
 * (its runner answers "unknown tool"); the server never runs anything it did not offer.
 *
 * Not offered yet, on purpose:
 * - Hand tools in a `self_hosted` environment (the client's worker runs them: issue 4);
 * - Hand tools whose policy is not `always_allow`: asking a human needs the permission gate and
 *   confirmations (issue 4); until then they are withheld rather than run without asking;
 * - toolset tools this build does not implement yet (see `HAND_TOOLS`).
 */
export function toolCatalog(
  agent: AgentDefinition,
  environment: EnvironmentConfig,
): Map<string, CatalogEntry> {
  const catalog = new Map<string, CatalogEntry>();
  for (const tool of agent.tools) {
    if (tool.type === "custom") {
      catalog.set(tool.name, {
        kind: "custom",
        spec: { name: tool.name, description: tool.description, input_schema: tool.input_schema },
      });
    } else if (tool.type === "agent_toolset_20260401" && environment.type === "cloud") {
      for (const [name, hand] of HAND_TOOLS) {
        const config = tool.configs.find((c) => c.name === name) ?? tool.default_config;
        if (!config.enabled || config.permission_policy.type !== "always_allow") continue;
        catalog.set(name, { kind: "hand", spec: hand.spec, tool: hand, policy: config.permission_policy });
      }
    }
  }
  return catalog;
}
