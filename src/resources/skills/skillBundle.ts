import { invalid } from "../../kernel/errors.js";
import { checkSkillName, parseSkillFrontMatter } from "./skillFrontMatter.js";
import { SKILL_PATH_MAX, SKILL_SEGMENT_MAX, type SkillLimits } from "./skillLimits.js";
import { expandSkillZip } from "./skillZip.js";

/** One uploaded part: its name carries the bundle's top-level directory (`my-skill/SKILL.md`). */
export interface UploadedSkillFile {
  path: string;
  bytes: Uint8Array;
}

/** A validated bundle: paths relative to its root directory, sorted, `SKILL.md` among them. */
export interface SkillBundle {
  /** The kebab-case slug: front matter `name`, else the root directory's name. */
  name: string;
  description: string;
  files: UploadedSkillFile[];
}

/**
 * Checks an upload as a whole before anything is stored: either one `.zip` holding the bundle, or
 * the bundle's files each named with its path. Every file must sit under ONE top-level directory
 * with a `SKILL.md` at its root; each path is relative, `/`-separated, free of `.`/`..` segments,
 * backslashes and control characters; no path twice, none both a file and a directory; counts and
 * sizes within `limits`. Throws `invalid_request` naming the first problem found.
 */
export function validateSkillBundle(uploads: readonly UploadedSkillFile[], limits: SkillLimits): SkillBundle {
  if (uploads.length === 0) throw invalid("files: upload at least one file (the bundle's SKILL.md)");
  const only = uploads.length === 1 ? uploads[0] : undefined;
  const files = only && /\.zip$/i.test(only.path) ? expandSkillZip(only.bytes, limits) : uploads;
  if (files.length === 0) throw invalid("the .zip upload holds no files");
  if (files.length > limits.maxFiles) throw invalid(`a skill holds at most ${limits.maxFiles} files`);

  let total = 0;
  let root: string | null = null;
  const relative = new Map<string, Uint8Array>();
  for (const file of files) {
    const segments = checkPath(file.path);
    if (segments.length < 2) {
      throw invalid(
        `${JSON.stringify(file.path)} is not inside a directory: name every file with the bundle's top-level directory (my-skill/SKILL.md)`,
      );
    }
    const [top, ...rest] = segments as [string, ...string[]];
    if (root === null) root = top;
    else if (top !== root) {
      throw invalid(
        `all files must be under one top-level directory: found ${JSON.stringify(root)} and ${JSON.stringify(top)}`,
      );
    }
    const path = rest.join("/");
    if (relative.has(path)) throw invalid(`${JSON.stringify(file.path)} is uploaded twice`);
    if (file.bytes.byteLength > limits.maxFileBytes) {
      throw invalid(`${JSON.stringify(file.path)} is larger than ${limits.maxFileBytes} bytes`);
    }
    total += file.bytes.byteLength;
    if (total > limits.maxTotalBytes) {
      throw invalid(`the bundle's files together are larger than ${limits.maxTotalBytes} bytes`);
    }
    relative.set(path, file.bytes);
  }
  checkNoFileIsADirectory([...relative.keys()]);

  const skillMd = relative.get("SKILL.md");
  if (!skillMd) throw invalid(`the bundle has no SKILL.md at the root of ${JSON.stringify(root)}`);
  const front = parseSkillFrontMatter(skillMd);
  const name = front.name ?? root ?? "";
  if (front.name === null) checkSkillName(name, "SKILL.md has no front matter name, and its directory");
  const sorted = [...relative.entries()]
    .sort(([a], [b]) => compareBytes(a, b))
    .map(([path, bytes]) => ({ path, bytes }));
  return { name, description: front.description, files: sorted };
}

/** The path's segments, or a 400 naming what is wrong with it. */
function checkPath(path: string): string[] {
  const shown = JSON.stringify(path.slice(0, 200));
  if (path.length === 0) throw invalid("a file has an empty name");
  if (path.length > SKILL_PATH_MAX) throw invalid(`a file path is longer than ${SKILL_PATH_MAX} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) throw invalid(`${shown} holds a control character`);
  if (path.includes("\\")) throw invalid(`${shown} holds a backslash; separate directories with "/"`);
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) throw invalid(`${shown} is an absolute path`);
  const segments = path.split("/");
  for (const segment of segments) {
    if (segment === "") throw invalid(`${shown} has an empty path segment`);
    if (segment === "." || segment === "..") throw invalid(`${shown} has a "${segment}" segment`);
    if (segment.length > SKILL_SEGMENT_MAX) {
      throw invalid(`${shown} has a segment longer than ${SKILL_SEGMENT_MAX} characters`);
    }
  }
  return segments;
}

/** `a/b` as a file and `a/b/c` as another cannot both be mounted. */
function checkNoFileIsADirectory(paths: readonly string[]): void {
  const set = new Set(paths);
  for (const path of paths) {
    let cut = path.lastIndexOf("/");
    while (cut > 0) {
      const parent = path.slice(0, cut);
      if (set.has(parent)) throw invalid(`${JSON.stringify(parent)} is both a file and a directory`);
      cut = parent.lastIndexOf("/");
    }
  }
}

/** Code-unit order, the same on every host (the digest and the archive depend on it). */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
