import type { ExecutableAgentSnapshot } from "../../coordinator/ports.js";
import { definitionFields } from "./agentFields.js";

type Json = Record<string, unknown>;

/**
 * An agent as a thread (or a session's roster) shows it (SDK `BetaManagedAgentsSessionThreadAgent`):
 * its pinned definition without the roster, which the SDK reads off the session.
 */
export function threadAgentDto(agent: ExecutableAgentSnapshot): Record<string, unknown> {
  const { multiagent: _roster, ...definition } = definitionFields(agent.definition);
  // An inline agent has no Agent resource (SDK `BetaManagedAgentsInlineAgent`): no id, no version.
  if (agent.inline) return { type: "inline", ...definition };
  return { id: agent.agentId, type: "agent", version: agent.version, ...definition };
}

/**
 * A session's `multiagent` (SDK `BetaManagedAgentsSessionMultiagent`): the agent's stored roster
 * with each `{type:"agent", id, version}` replaced by that agent's full definition, as the session
 * pinned it. A session pinned before rosters were (no `roster`) shows the references as stored.
 */
export function sessionMultiagentDto(agent: ExecutableAgentSnapshot): Json | null {
  const multiagent = agent.definition.multiagent;
  if (multiagent === null || agent.roster === undefined) return multiagent;
  const pinned = new Map(agent.roster.map((a) => [`${a.agentId}@${a.version}`, a]));
  const whole = (entry: unknown): unknown => {
    if (!isObject(entry) || entry.type !== "agent") return entry;
    const found = pinned.get(`${String(entry.id)}@${String(entry.version)}`);
    return found ? threadAgentDto(found) : entry;
  };
  const list = (value: unknown) => (Array.isArray(value) ? value.map(whole) : value);
  if (multiagent.type === "coordinator") return { ...multiagent, agents: list(multiagent.agents) };
  const member = (value: unknown) =>
    isObject(value) && value.type === "enabled"
      ? { ...value, predefined_agents: list(value.predefined_agents) }
      : value;
  return { ...multiagent, subagents: member(multiagent.subagents), workflows: member(multiagent.workflows) };
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
