/**
 * Skills without a sandbox: the runtime serves them itself, as two tools whose answers come from
 * the pinned versions' blobs (`RunResources.readBlob`, under the run's claim). Offered only when the
 * agent has skills and the run has no sandbox to mount them in (skillCatalog.ts says which).
 */
import type { BlobDigest, RunSkill } from "../resources/ports.js";
import { MAX_TOOL_OUTPUT_BYTES } from "./hand/index.js";
import type { RuntimeTool } from "./toolCatalog.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function skillTools(
  skills: readonly RunSkill[],
  readBlob: (digest: BlobDigest) => Promise<Buffer | null>,
): RuntimeTool[] {
  const listSkills: RuntimeTool = {
    spec: {
      name: "list_skills",
      description: "Lists your skills: each one's name, description and files.",
      input_schema: { type: "object", properties: {}, additionalProperties: false },
    },
    repeatable: true,
    run: async () => ({
      text: JSON.stringify(
        skills.map((s) => ({
          name: s.name,
          description: s.description,
          version: s.version,
          files: s.files.map((f) => f.path),
        })),
        null,
        2,
      ),
      isError: false,
    }),
  };
  const loadSkill: RuntimeTool = {
    spec: {
      name: "load_skill",
      description:
        "Reads one of your skills: its SKILL.md by default, or another of its files given its path within the skill.",
      input_schema: {
        type: "object",
        properties: {
          name: { type: "string", description: "The skill's name, as list_skills gives it." },
          path: {
            type: "string",
            description: "A file of the skill, relative to its root. Default: SKILL.md.",
          },
        },
        required: ["name"],
        additionalProperties: false,
      },
    },
    repeatable: true,
    run: async (input) => {
      const name = input.name;
      const path = input.path ?? "SKILL.md";
      if (typeof name !== "string" || typeof path !== "string")
        return { text: "load_skill: name (and path, when given) must be strings", isError: true };
      const skill = skills.find((s) => s.name === name);
      if (!skill)
        return { text: `load_skill: no skill is named ${JSON.stringify(name.slice(0, 200))}`, isError: true };
      // Only a path the version lists is read: nothing else is addressable, whatever the input says.
      const file = skill.files.find((f) => f.path === path);
      if (!file)
        return {
          text: `load_skill: the skill ${skill.name} has no file ${JSON.stringify(path.slice(0, 200))}`,
          isError: true,
        };
      const bytes = await readBlob(file.digest);
      if (bytes === null) return { text: `load_skill: the file ${path} is not available`, isError: true };
      let text: string;
      try {
        text = utf8.decode(bytes);
      } catch {
        return {
          text: `load_skill: ${path} is binary (${bytes.length} bytes) and cannot be shown`,
          isError: true,
        };
      }
      if (Buffer.byteLength(text) > MAX_TOOL_OUTPUT_BYTES)
        text = `${Buffer.from(text).subarray(0, MAX_TOOL_OUTPUT_BYTES).toString("utf8")}\n[truncated]`;
      return { text, isError: false };
    },
  };
  return [listSkills, loadSkill];
}
