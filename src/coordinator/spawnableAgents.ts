import { fingerprint } from "../kernel/canonicalJson.js";
import type { InlineAgentParams } from "./commitOperation.js";
import type { ExecutableAgentSnapshot } from "./ports.js";

export {
  INLINE_DESCRIPTION_MAX_CHARS,
  INLINE_NAME_MAX_CHARS,
  INLINE_SYSTEM_MAX_CHARS,
  type InlineAgentParams,
} from "./commitOperation.js";

/**
 * What a run's agent may start as threads, read from its pinned `multiagent` configuration: the
 * `subagents` member (spawned one by one) and the `workflows` member (a workflow run's steps), each
 * with its own list of predefined agents and its own switch for inline agents. The runtime offers
 * tools from this, and the coordinator checks a remote worker's spawns against it: a worker chooses
 * which agent, never what that agent is.
 */

export type SpawnMember = "subagents" | "workflows";

export interface SpawnableAgents {
  /** The member's predefined agents by name, as the session pinned them. */
  predefined: Map<string, ExecutableAgentSnapshot>;
  inline: boolean;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The member's agents, or null when the agent's configuration does not enable it. */
export function spawnableAgents(agent: ExecutableAgentSnapshot, member: SpawnMember): SpawnableAgents | null {
  // Snapshots pinned before agents had a `multiagent` field have none: they start nothing.
  const multiagent = agent.definition.multiagent;
  if (!isObject(multiagent)) return null;
  const pinned = new Map((agent.roster ?? []).map((a) => [`${a.agentId}@${a.version}`, a]));
  const byName = (entries: unknown): Map<string, ExecutableAgentSnapshot> => {
    const named = new Map<string, ExecutableAgentSnapshot>();
    for (const entry of Array.isArray(entries) ? entries : []) {
      if (!isObject(entry) || entry.type !== "agent") continue;
      const found = pinned.get(`${String(entry.id)}@${String(entry.version)}`);
      if (found && !named.has(found.definition.name)) named.set(found.definition.name, found);
    }
    return named;
  };
  // The older roster is one list of subagents, without inline agents or workflows.
  if (multiagent.type === "coordinator")
    return member === "subagents" ? { predefined: byName(multiagent.agents), inline: false } : null;
  const config = multiagent[member];
  if (!isObject(config) || config.type !== "enabled") return null;
  const inline = !(isObject(config.inline_agents) && config.inline_agents.type === "disabled");
  return { predefined: byName(config.predefined_agents), inline };
}

/**
 * An inline agent runs as its parent's agent under another name and prompt: the same model, tools,
 * permission policies, MCP servers and skills, so defining one never grants more than the parent
 * has, and no roster of its own (depth limit 1).
 */
export function inlineAgentSnapshot(
  parent: ExecutableAgentSnapshot,
  params: InlineAgentParams,
): ExecutableAgentSnapshot {
  const definition = {
    ...parent.definition,
    name: params.name,
    system: params.system,
    description: params.description,
    multiagent: null,
  };
  return {
    workspaceId: parent.workspaceId,
    agentId: parent.agentId,
    version: parent.version,
    fingerprint: fingerprint(definition),
    definition,
    publishedAt: parent.publishedAt,
    inline: true,
  };
}

/** The agent a spawn runs, or why the member cannot start it (written for the model to read). */
export function spawnedAgent(
  parent: ExecutableAgentSnapshot,
  member: SpawnMember,
  request: { agentName: string; inline?: InlineAgentParams | undefined },
): ExecutableAgentSnapshot | { refused: string } {
  const agents = spawnableAgents(parent, member);
  if (agents === null) return { refused: `this agent's ${member} are disabled` };
  if (request.inline) {
    return agents.inline
      ? inlineAgentSnapshot(parent, request.inline)
      : { refused: `this agent's ${member} cannot define inline agents` };
  }
  const found = agents.predefined.get(request.agentName);
  if (found) return found;
  const names = [...agents.predefined.keys()];
  return {
    refused: `no predefined agent is named ${JSON.stringify(request.agentName.slice(0, 100))}; ${
      names.length === 0 ? "there are none" : `the names are ${names.join(", ")}`
    }`,
  };
}
