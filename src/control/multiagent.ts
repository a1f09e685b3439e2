import { invalid } from "../kernel/errors.js";

/**
 * An agent's `multiagent` configuration, from the parameters a client sent to what an agent version
 * stores and shows (the SDK's resolved `BetaManagedAgentsMultiagent`): defaults filled in, every
 * roster entry resolved to `{type:"agent", id, version}` and checked against the catalog. Shapes
 * were checked by the edge's schema; these rules need the stored agents (and, on an update, the
 * stored configuration it merges into).
 */

type Json = Record<string, unknown>;

/** What resolution reads of a referenced agent: whether it exists, is archived, and its version's roster. */
export interface RosterAgent {
  latestVersion: number;
  archived: boolean;
  /** The referenced version's own `multiagent` (null: none), or undefined when it has no such version. */
  multiagentAt(version: number): Promise<Json | null | undefined>;
}

export interface RosterContext {
  /** The agent that owns the configuration, and the version being written (what `self` resolves to). */
  self: { agentId: string; version: number };
  /** A referenced agent in the same workspace, or null when there is none. */
  agent(agentId: string): Promise<RosterAgent | null>;
}

const DISABLED: Json = { type: "disabled" };
const ENABLED: Json = { type: "enabled" };
const SPAWNERS = ["subagents", "workflows"] as const;

/**
 * The configuration to resolve: on an update, a `multiagent_20261001` sent over a stored one of the
 * same type is merged into it level by level (SDK `BetaManagedAgentsMultiagent20261001Params`): an
 * omitted key keeps its stored value, an object of the stored type merges into it, one of another
 * type replaces it, and a sent `predefined_agents` list replaces the stored list. Null takes the
 * default (in `resolveMultiagent`). Anything else replaces the stored configuration.
 */
export function mergeMultiagent(stored: Json | null, sent: Json): Json {
  if (stored?.type !== "multiagent_20261001" || sent.type !== "multiagent_20261001") return sent;
  const merged: Json = { ...stored };
  for (const key of ["advisor", ...SPAWNERS] as const) {
    if (!(key in sent) || sent[key] === undefined) continue;
    const value = sent[key];
    const before = stored[key];
    merged[key] =
      isObject(value) && isObject(before) && before.type === value.type
        ? { ...before, ...definedFields(value) }
        : value;
  }
  return merged;
}

/** The stored form of a configuration: defaults filled in, roster entries resolved and checked. */
export async function resolveMultiagent(params: Json, context: RosterContext): Promise<Json> {
  if (params.type === "coordinator") {
    const agents = await resolveRoster(params.agents, "multiagent.agents", context, true);
    return { type: "coordinator", agents };
  }
  const advisor = isObject(params.advisor) ? params.advisor : DISABLED;
  const resolved: Json = {
    type: "multiagent_20261001",
    advisor: advisor.type === "enabled" ? { type: "enabled", model: advisor.model } : { ...DISABLED },
  };
  for (const key of SPAWNERS) resolved[key] = await resolveSpawner(params[key], `multiagent.${key}`, context);
  return resolved;
}

/**
 * Rewrites the owner's own references (its `self`) to `version`: a configuration stored with one
 * version names that version, and carried into the next version it names the next.
 */
export function withSelfVersion(multiagent: Json | null, agentId: string, version: number): Json | null {
  if (multiagent === null) return null;
  const own = (entry: unknown) =>
    isObject(entry) && entry.type === "agent" && entry.id === agentId ? { ...entry, version } : entry;
  if (multiagent.type === "coordinator" && Array.isArray(multiagent.agents))
    return { ...multiagent, agents: multiagent.agents.map(own) };
  const next: Json = { ...multiagent };
  for (const key of SPAWNERS) {
    const spawner = multiagent[key];
    if (isObject(spawner) && Array.isArray(spawner.predefined_agents))
      next[key] = { ...spawner, predefined_agents: spawner.predefined_agents.map(own) };
  }
  return next;
}

async function resolveSpawner(value: unknown, field: string, context: RosterContext): Promise<Json> {
  // Omitted or null: enabled, with inline agents and no predefined ones (the SDK's defaults).
  const params = isObject(value) ? value : ENABLED;
  if (params.type === "disabled") return { ...DISABLED };
  const inline =
    isObject(params.inline_agents) && params.inline_agents.type === "disabled"
      ? { ...DISABLED }
      : { ...ENABLED };
  const predefined = await resolveRoster(
    params.predefined_agents ?? [],
    `${field}.predefined_agents`,
    context,
    false,
  );
  if (inline.type === "disabled" && predefined.length === 0) {
    throw invalid(
      `${field}.predefined_agents: must name at least one agent when ${field}.inline_agents is disabled (it could spawn nothing)`,
    );
  }
  return { type: "enabled", inline_agents: inline, predefined_agents: predefined };
}

/**
 * Roster entries to resolved references, in order. Entries must name distinct agents (after `self`
 * and id strings are resolved), at most one `self`; a referenced agent must exist, not be archived,
 * have the version named and no `multiagent` of its own (depth limit 1). Advisors (a coordinator's
 * roster only) are kept as `{type:"advisor", model}`.
 */
async function resolveRoster(
  entries: unknown,
  field: string,
  context: RosterContext,
  advisors: boolean,
): Promise<Json[]> {
  const list = Array.isArray(entries) ? entries : [];
  const seen = new Set<string>();
  let selves = 0;
  const resolved: Json[] = [];
  for (const [index, entry] of list.entries()) {
    const at = `${field}[${index}]`;
    if (advisors && isObject(entry) && entry.type === "advisor") {
      resolved.push({ type: "advisor", model: entry.model });
      continue;
    }
    const ref = referenceOf(entry, context.self.agentId);
    if (ref === "self") {
      selves += 1;
      if (selves > 1) throw invalid(`${at}: at most one entry may be {"type": "self"}`);
    }
    const id = ref === "self" ? context.self.agentId : ref.id;
    if (seen.has(id)) {
      throw invalid(`${at}: agent ${id} is already in this list; entries must reference distinct agents`);
    }
    seen.add(id);
    if (ref === "self") {
      resolved.push({ type: "agent", id, version: context.self.version });
      continue;
    }
    resolved.push({ type: "agent", id, version: await checkedVersion(at, ref, context) });
  }
  return resolved;
}

/** A roster entry as `self` or an agent reference; the owner's own id counts as `self`. */
function referenceOf(entry: unknown, ownId: string): "self" | { id: string; version?: number } {
  if (typeof entry === "string") return entry === ownId ? "self" : { id: entry };
  if (!isObject(entry) || entry.type === "self") return "self";
  const id = String(entry.id);
  if (id === ownId) return "self";
  return typeof entry.version === "number" ? { id, version: entry.version } : { id };
}

async function checkedVersion(
  at: string,
  ref: { id: string; version?: number },
  context: RosterContext,
): Promise<number> {
  const agent = await context.agent(ref.id);
  if (!agent) throw invalid(`${at}: agent ${ref.id} does not exist`);
  if (agent.archived) throw invalid(`${at}: agent ${ref.id} is archived`);
  const version = ref.version ?? agent.latestVersion;
  const roster = await agent.multiagentAt(version);
  if (roster === undefined) {
    throw invalid(
      `${at}: agent ${ref.id} has no version ${version}; it has versions 1-${agent.latestVersion}`,
    );
  }
  if (roster !== null) {
    throw invalid(
      `${at}: agent ${ref.id} (version ${version}) has a multiagent configuration of its own; a roster's agents must not (depth limit 1)`,
    );
  }
  return version;
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function definedFields(value: Json): Json {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
