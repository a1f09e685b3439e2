import type { ExecutableAgentSnapshot } from "../coordinator/ports.js";
import {
  INLINE_DESCRIPTION_MAX_CHARS,
  INLINE_NAME_MAX_CHARS,
  INLINE_SYSTEM_MAX_CHARS,
  type InlineAgentParams,
  type SpawnMember,
  spawnableAgents,
  spawnedAgent,
} from "../coordinator/spawnableAgents.js";
import type { JsonObject, JsonValue } from "../kernel/json.js";

/** The agent a spawn or a workflow step chose, as its model wrote it. */
export interface AgentChoice {
  agentName: string;
  agent: ExecutableAgentSnapshot;
  inline?: InlineAgentParams;
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads `agent_name` (a predefined agent) or `agent` (an inline definition: name, system,
 * description) from a model's tool input, and resolves it against what the member may start.
 * Anything else is an error the model reads as its call's result.
 */
export function chooseAgent(
  parent: ExecutableAgentSnapshot,
  member: SpawnMember,
  input: JsonObject,
): AgentChoice | { error: string } {
  const inline = isObject(input.agent) ? inlineParams(input.agent) : null;
  if (typeof inline === "string") return { error: inline };
  const agentName = inline ? inline.name : typeof input.agent_name === "string" ? input.agent_name : "";
  if (!inline && agentName === "")
    return { error: "give agent_name (a predefined agent) or agent (an inline one)" };
  const agent = spawnedAgent(parent, member, inline ? { agentName, inline } : { agentName });
  if ("refused" in agent) return { error: agent.refused };
  return inline ? { agentName, agent, inline } : { agentName, agent };
}

function inlineParams(agent: JsonObject): InlineAgentParams | string {
  const name = typeof agent.name === "string" ? agent.name.trim() : "";
  if (name === "" || name.length > INLINE_NAME_MAX_CHARS)
    return `agent.name must be a non-empty string of at most ${INLINE_NAME_MAX_CHARS} characters`;
  const system = agent.system ?? null;
  if (system !== null && (typeof system !== "string" || system.length > INLINE_SYSTEM_MAX_CHARS))
    return `agent.system must be a string of at most ${INLINE_SYSTEM_MAX_CHARS} characters`;
  const description = agent.description ?? null;
  if (
    description !== null &&
    (typeof description !== "string" || description.length > INLINE_DESCRIPTION_MAX_CHARS)
  )
    return `agent.description must be a string of at most ${INLINE_DESCRIPTION_MAX_CHARS} characters`;
  return { name, system, description };
}

/**
 * The input schema's agent properties for a member: `agent_name` over its predefined agents and,
 * when it allows inline agents, `agent`. Null when the member can start nothing.
 */
export function agentChoiceSchema(
  parent: ExecutableAgentSnapshot,
  member: SpawnMember,
): { properties: JsonObject; required: string[] } | null {
  const agents = spawnableAgents(parent, member);
  if (agents === null) return null;
  const names = [...agents.predefined.keys()];
  if (names.length === 0 && !agents.inline) return null;
  const properties: JsonObject = {};
  if (names.length > 0)
    properties.agent_name = { type: "string", enum: names, description: "A predefined agent to run." };
  if (agents.inline) {
    properties.agent = {
      type: "object",
      description:
        "An agent you define yourself instead of a predefined one: it runs with your model and tools.",
      properties: {
        name: { type: "string", description: "Its name." },
        system: { type: "string", description: "Its system prompt." },
        description: { type: "string", description: "What it is for." },
      },
      required: ["name", "system"],
    };
  }
  // With only one way to choose, the schema can require it.
  const required = agents.inline ? (names.length === 0 ? ["agent"] : []) : ["agent_name"];
  return { properties, required };
}
