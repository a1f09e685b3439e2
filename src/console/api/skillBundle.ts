import { unzipSync } from "fflate";

/**
 * A skill version's files and its SKILL.md, read from the zip `skills.versions.download` answers:
 * the archive is the one the server builds, but every name and byte in it was uploaded by a client.
 * Only SKILL.md is inflated, and only up to `SKILL_MD_LIMIT`: a hostile bundle cannot make the
 * Console inflate more than that, whatever sizes its other entries declare.
 */

export const SKILL_MD_LIMIT = 256 * 1024;

export interface BundleEntry {
  path: string;
  /** The size the archive declares for it, uncompressed. */
  sizeBytes: number;
}

export interface SkillBundle {
  files: BundleEntry[];
  /** SKILL.md's text, or null when there is none or it is over the limit (`skillMdProblem` says which). */
  skillMd: string | null;
  skillMdProblem: string | null;
}

/** `SKILL.md` at the archive's root or directly inside its one top-level directory. */
const SKILL_MD = /^(?:[^/]+\/)?SKILL\.md$/;

export function readSkillBundle(zip: Uint8Array): SkillBundle {
  const files: BundleEntry[] = [];
  let tooLarge = false;
  const inflated = unzipSync(zip, {
    filter: (entry) => {
      if (entry.name.endsWith("/")) return false;
      files.push({ path: entry.name, sizeBytes: entry.originalSize });
      if (!SKILL_MD.test(entry.name)) return false;
      if (entry.originalSize > SKILL_MD_LIMIT) {
        tooLarge = true;
        return false;
      }
      return true;
    },
  });
  // The shallowest SKILL.md is the skill's own (a nested one would be just another file).
  const name = Object.keys(inflated).sort((a, b) => a.split("/").length - b.split("/").length)[0];
  const bytes = name === undefined ? undefined : inflated[name];
  if (bytes === undefined) {
    return {
      files,
      skillMd: null,
      skillMdProblem: tooLarge
        ? `SKILL.md is over ${SKILL_MD_LIMIT} bytes: download the bundle to read it`
        : "no SKILL.md in the bundle",
    };
  }
  // The declared size is a claim; what was inflated is the truth, and it is capped as well.
  const text = new TextDecoder("utf-8").decode(bytes.subarray(0, SKILL_MD_LIMIT));
  return { files, skillMd: text, skillMdProblem: null };
}
