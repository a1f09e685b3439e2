import type { ExecutableAgentSnapshot } from "../coordinator/ports.js";
import type { AgentPinner, AgentRef } from "../coordinator/sessionEntry.js";
import { fingerprint } from "../kernel/canonicalJson.js";
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
    private readonly agents: Pick<AgentService, "resolveForSession">,
    private readonly skills: SkillVersionResolver = NO_SKILLS,
  ) {}

  async pin(workspaceId: string, ref: AgentRef): Promise<ExecutableAgentSnapshot> {
    const publication = await this.agents.resolveForSession(workspaceId, ref.id, ref.version);
    let definition = publication.definition;
    if (ref.overrides !== undefined) {
      const overrides = ref.overrides as AgentUpdateInput;
      definition = applyAgentUpdate(definition, overrides);
      validateAgentDefinition(definition);
      if (overrides.skills !== undefined) {
        definition.skills = await pinSkills(workspaceId, definition.skills, this.skills);
      }
    }
    return {
      workspaceId,
      agentId: publication.agentId,
      version: publication.version,
      fingerprint: definition === publication.definition ? publication.fingerprint : fingerprint(definition),
      definition,
      publishedAt: publication.createdAt,
    };
  }
}
