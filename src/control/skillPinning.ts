import { invalid } from "../kernel/errors.js";
import { LATEST_SKILL_VERSION, type Skill } from "./agentDefinition.js";
import type { SkillVersionResolver } from "./ports.js";

/** Skills one agent may name: each is resolved (a read) at every publication. */
export const MAX_AGENT_SKILLS = 64;

/** Where no skill service is composed: every custom skill is refused, naming why. */
export const NO_SKILLS: SkillVersionResolver = {
  resolve: async (_workspaceId, skillId) => {
    throw invalid(
      `skills: custom skill ${JSON.stringify(skillId)} cannot be used: this server serves no skills`,
    );
  },
};

/**
 * Pins each custom skill to an exact version at publication: omitted or `latest` becomes the
 * skill's newest version at this moment, an explicit version must exist. Anthropic skills are kept
 * as given (this product does not serve them; their runs are told so). A skill named twice is refused.
 */
export async function pinSkills(
  workspaceId: string,
  skills: readonly Skill[],
  resolver: SkillVersionResolver,
): Promise<Skill[]> {
  if (skills.length > MAX_AGENT_SKILLS) {
    throw invalid(`skills: an agent has at most ${MAX_AGENT_SKILLS} skills, got ${skills.length}`);
  }
  const seen = new Set<string>();
  const pinned: Skill[] = [];
  for (const skill of skills) {
    const key = `${skill.type}:${skill.skill_id}`;
    if (seen.has(key)) throw invalid(`skills: ${JSON.stringify(skill.skill_id)} is listed twice`);
    seen.add(key);
    if (skill.type !== "custom") {
      pinned.push(skill);
      continue;
    }
    const asked = skill.version === LATEST_SKILL_VERSION ? null : skill.version;
    const version = await resolver.resolve(workspaceId, skill.skill_id, asked);
    pinned.push({ type: "custom", skill_id: skill.skill_id, version });
  }
  return pinned;
}
