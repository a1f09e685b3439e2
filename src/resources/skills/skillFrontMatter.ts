import { parse } from "yaml";
import { invalid } from "../../kernel/errors.js";
import { SKILL_DESCRIPTION_MAX, SKILL_NAME_MAX } from "./skillLimits.js";

/** A skill's slug: kebab-case, what the bundle mounts and downloads as. */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Front matter larger than this is refused before YAML sees it. */
const FRONT_MATTER_MAX = 16 * 1024;

export interface SkillFrontMatter {
  /** Absent: the bundle's directory names the skill. */
  name: string | null;
  description: string;
}

/**
 * Reads SKILL.md's YAML front matter (`---` … `---` at the very top): a mapping with a string
 * `description` and optionally a kebab-case string `name`. Other keys are kept in the file, not read.
 */
export function parseSkillFrontMatter(bytes: Uint8Array): SkillFrontMatter {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw invalid("SKILL.md is not UTF-8 text");
  }
  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)/.exec(text);
  if (!match) {
    throw invalid(
      'SKILL.md must begin with YAML front matter between "---" lines (holding name and description)',
    );
  }
  const yamlText = match[1] ?? "";
  if (yamlText.length > FRONT_MATTER_MAX) {
    throw invalid(`SKILL.md front matter is longer than ${FRONT_MATTER_MAX} characters`);
  }
  let data: unknown;
  try {
    // No aliases: a few lines of YAML must not expand into a large document.
    data = parse(yamlText, { maxAliasCount: 0, uniqueKeys: true });
  } catch (error) {
    throw invalid(`SKILL.md front matter is not valid YAML: ${firstLine(error)}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw invalid("SKILL.md front matter must be a YAML mapping with name and description");
  }
  const fields = data as Record<string, unknown>;
  const name = Object.hasOwn(fields, "name") ? fields.name : undefined;
  const description = Object.hasOwn(fields, "description") ? fields.description : undefined;
  if (name !== undefined && name !== null) {
    if (typeof name !== "string") throw invalid("SKILL.md front matter: name must be a string");
    checkSkillName(name, "SKILL.md front matter: name");
  }
  if (typeof description !== "string" || description.trim() === "") {
    throw invalid("SKILL.md front matter: description is required (a non-empty string)");
  }
  if (description.length > SKILL_DESCRIPTION_MAX) {
    throw invalid(`SKILL.md front matter: description is longer than ${SKILL_DESCRIPTION_MAX} characters`);
  }
  return { name: typeof name === "string" ? name : null, description: description.trim() };
}

/** Throws naming `what` when `name` is not a kebab-case slug of at most 64 characters. */
export function checkSkillName(name: string, what: string): void {
  if (name.length > SKILL_NAME_MAX) throw invalid(`${what} is longer than ${SKILL_NAME_MAX} characters`);
  if (!SKILL_NAME_PATTERN.test(name)) {
    throw invalid(
      `${what} ${JSON.stringify(name)} is not kebab-case (lowercase letters, digits and single hyphens)`,
    );
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? "").slice(0, 200);
}
