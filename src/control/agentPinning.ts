import type { ExecutableAgentSnapshot } from "../coordinator/ports.js";
import type { AgentPinner, AgentRef } from "../coordinator/sessionEntry.js";
import { fingerprint } from "../kernel/canonicalJson.js";
import { assertKnownAcpRuntime, type KnownAcpRuntimes, NO_ACP_RUNTIMES } from "./acpRuntimes.js";
import type { AgentUpdateInput } from "./agentDefinition.js";
import { applyAgentUpdate, validateAgentDefinition } from "./agentResolution.js";
import type { AgentService } from "./agentService.js";
import type { SkillVersionResolver } from "./ports.js";
import { NO_SKILLS, pinSkills } from "./skillPinning.js";

/**
 * Pins a session's agent to an exact registered version (latest when none is named). With
 * overrides, the session pins a derived snapshot that only this session uses; it keeps the source
 * version number and gets its own fingerprint. Overrides arrive validated by the edge's schema
 * (as an agent update's fields); the result is validated as a whole definition here. Skills the
 * overrides name are pinned to exact versions now, as a publication's are.
 */
export class RegisteredAgentPinner implements AgentPinner {
  constructor(
    private readonly agents: Pick<AgentService, "resolveForSession" | "retrieve">,
    private readonly skills: SkillVersionResolver = NO_SKILLS,
    /** The ACP runtimes an override's `acp:<runtime>` model may name, as at publication. */
    private readonly acpRuntimes: KnownAcpRuntimes = NO_ACP_RUNTIMES,
  ) {}

  async pin(workspaceId: string, ref: AgentRef): Promise<ExecutableAgentSnapshot> {
    const publication = await this.agents.resolveForSession(workspaceId, ref.id, ref.version);
    let definition = publication.definition;
    if (ref.overrides !== undefined) {
      const overrides = ref.overrides as AgentUpdateInput;
      definition = applyAgentUpdate(definition, overrides);
      validateAgentDefinition(definition);
      // Only a model the overrides name: the published one was checked where it was published.
      if (overrides.model !== undefined) assertKnownAcpRuntime(definition, this.acpRuntimes);
      if (overrides.skills !== undefined) {
        definition.skills = await pinSkills(workspaceId, definition.skills, this.skills);
      }
    }
    const snapshot: ExecutableAgentSnapshot = {
      workspaceId,
      agentId: publication.agentId,
      version: publication.version,
      fingerprint: definition === publication.definition ? publication.fingerprint : fingerprint(definition),
      definition,
      publishedAt: publication.createdAt,
    };
    const references = rosterReferences(definition.multiagent);
    if (references.length === 0) return snapshot;
    // The roster's versions are pinned with the session (a version never changes): the threads it
    // spawns run exactly these, and the session shows them whole.
    const roster = await Promise.all(
      references.map(async ({ id, version }) => {
        if (id === snapshot.agentId && version === snapshot.version) return snapshot;
        const { publication: named } = await this.agents.retrieve(workspaceId, id, version);
        return {
          workspaceId,
          agentId: named.agentId,
          version: named.version,
          fingerprint: named.fingerprint,
          definition: named.definition,
          publishedAt: named.createdAt,
        };
      }),
    );
    return { ...snapshot, roster };
  }
}

/** The `{type:"agent", id, version}` references of a stored roster, in order, each once. */
function rosterReferences(
  multiagent: Record<string, unknown> | null,
): Array<{ id: string; version: number }> {
  if (multiagent === null) return [];
  const lists =
    multiagent.type === "coordinator"
      ? [multiagent.agents]
      : [multiagent.subagents, multiagent.workflows].map((member) =>
          typeof member === "object" && member !== null
            ? (member as Record<string, unknown>).predefined_agents
            : [],
        );
  const seen = new Set<string>();
  const references: Array<{ id: string; version: number }> = [];
  for (const entry of lists.flatMap((list) => (Array.isArray(list) ? list : []))) {
    if (typeof entry !== "object" || entry === null) continue;
    const { type, id, version } = entry as Record<string, unknown>;
    if (type !== "agent" || typeof id !== "string" || typeof version !== "number") continue;
    const key = `${id}@${version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    references.push({ id, version });
  }
  return references;
}
