import type { AgentDefinition, PermissionPolicy } from "../control/agentDefinition.js";
import type { EnvironmentConfig } from "../coordinator/environmentConfig.js";
import type { ModelToolSpec } from "../providers/ports.js";
import { HAND_TOOLS, type HandTool } from "./hand/index.js";

export type CatalogEntry =
  | { kind: "custom"; spec: ModelToolSpec }
  | {
      kind: "hand";
      spec: ModelToolSpec;
      tool: HandTool;
      policy: PermissionPolicy;
      /** `server`: this worker runs it in the sandbox (cloud); `client`: a self-hosted worker does. */
      runsOn: "server" | "client";
    };

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
