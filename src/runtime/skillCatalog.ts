/**
 * The agent's pinned skills as the model learns of them. With a sandbox, each skill version's files
 * are mounted read-only under `SKILLS_MOUNT` and the system prompt lists each skill's name,
 * description and SKILL.md path, so the model reads SKILL.md (and whatever it points to) with its
 * file tools when a task calls for the skill. Without a sandbox the same list names the
 * `load_skill` tool instead (skillTools.ts).
 */
import type { RunSkill } from "../resources/ports.js";

/** Where the bwrap tier shows the skills' files. */
export const SKILLS_MOUNT = "/mnt/skills";

/** A skill's directory name: its name when it is a plain path segment, else its id (always one). */
export function skillDirName(skill: RunSkill): string {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(skill.name) && !skill.name.includes("..")
    ? skill.name
    : skill.skillId;
}

/** One line of text, bounded: names and descriptions are the skill author's, not ours. */
function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The system prompt's part about skills; null when the agent has none. */
export function skillCatalogPrompt(skills: readonly RunSkill[], mode: "mounted" | "tools"): string | null {
  if (skills.length === 0) return null;
  const lines = skills.map((skill) => {
    const where =
      mode === "mounted"
        ? `${SKILLS_MOUNT}/${skillDirName(skill)}/SKILL.md`
        : `load_skill with name "${oneLine(skill.name, 128)}"`;
    return `- ${oneLine(skill.name, 128)}: ${oneLine(skill.description, 1024)} (${where})`;
  });
  const how =
    mode === "mounted"
      ? "Each skill's files are read-only under its directory. When a task matches a skill, read its SKILL.md first with your file tools and follow it."
      : "When a task matches a skill, call load_skill with its name to read its SKILL.md, and with a path to read another of its files.";
  return ["# Skills", "", `You have these skills. ${how}`, "", ...lines].join("\n");
}

/** The agent's own system prompt followed by the parts the run adds. */
export function systemPrompt(own: string | null, ...parts: Array<string | null>): string | null {
  const all = [own, ...parts].filter((part): part is string => part !== null && part !== "");
  return all.length === 0 ? null : all.join("\n\n");
}
