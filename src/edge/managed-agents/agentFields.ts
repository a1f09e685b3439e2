import type { AgentDefinition } from "../../control/agentDefinition.js";

/** The configuration fields an agent and a session's agent snapshot share. */
export function definitionFields(d: AgentDefinition) {
  return {
    name: d.name,
    description: d.description,
    system: d.system,
    model: d.model,
    tools: d.tools,
    mcp_servers: d.mcp_servers,
    skills: d.skills,
    execution_identity: d.execution_identity,
    multiagent: d.multiagent,
  };
}
