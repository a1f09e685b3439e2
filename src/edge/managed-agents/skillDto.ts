import { isoTime } from "../../kernel/clock.js";
import type { SkillRecord, SkillVersionRecord } from "../../resources/skills/ports.js";

// Projections of skills and their versions to the wire (the SDK's `BetaSkill`/`Skill` and
// `BetaSkillVersion`/`SkillVersion`). Every stored skill is the workspace's own: source `custom`.

export function skillDto(s: SkillRecord): Record<string, unknown> {
  return {
    id: s.id,
    type: "skill",
    display_name: s.displayName,
    latest_version_id: s.latestVersionId,
    source: { type: "custom" },
    created_at: isoTime(s.createdAt),
    updated_at: isoTime(s.updatedAt),
  };
}

export function skillVersionDto(v: SkillVersionRecord): Record<string, unknown> {
  return {
    id: v.id,
    type: "skill_version",
    skill_id: v.skillId,
    name: v.name,
    description: v.description,
    created_at: isoTime(v.createdAt),
  };
}
