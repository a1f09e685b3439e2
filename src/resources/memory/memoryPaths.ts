/**
 * A memory's path as the wire gives it: `/`-rooted, `/`-separated, 1 to 20 segments (SDK rules),
 * plus what the runtime's filesystem mount needs (no backslash, segments of at most 255 bytes). A
 * path is checked whole and never rewritten: a path that would need normalizing is refused.
 */

export const MEMORY_PATH_LIMITS = { bytes: 1024, segments: 20, segmentBytes: 255 } as const;

// Control (Cc), format (Cf) and unpaired surrogate (Cs) characters, and the line and paragraph
// separators: invisible or unrepresentable in a file name, each a way to make two paths look alike.
const FORBIDDEN_CHARACTER = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;

/** Why `path` is not a valid memory path, or null when it is. The message never quotes the path. */
export function memoryPathProblem(path: string): string | null {
  if (!path.startsWith("/")) return "must start with / (such as /notes/todo.md)";
  const bytes = Buffer.byteLength(path, "utf8");
  if (bytes > MEMORY_PATH_LIMITS.bytes) {
    return `is ${bytes} bytes as UTF-8; at most ${MEMORY_PATH_LIMITS.bytes} are accepted`;
  }
  if (FORBIDDEN_CHARACTER.test(path)) {
    return "must not contain control or format characters (NUL, newlines, U+2028/U+2029, bidi marks)";
  }
  if (path.includes("\\")) return "must not contain a backslash; separate segments with /";
  if (path.normalize("NFC") !== path) return "must be in Unicode Normalization Form C";
  const segments = path.slice(1).split("/");
  if (segments.length > MEMORY_PATH_LIMITS.segments) {
    return `has ${segments.length} segments; at most ${MEMORY_PATH_LIMITS.segments} are accepted`;
  }
  for (const segment of segments) {
    if (segment === "") return "must not have an empty segment (no //, and no trailing /)";
    if (segment === "." || segment === "..") return "must not have a . or .. segment";
    if (Buffer.byteLength(segment, "utf8") > MEMORY_PATH_LIMITS.segmentBytes) {
      return `has a segment longer than ${MEMORY_PATH_LIMITS.segmentBytes} bytes`;
    }
  }
  return null;
}

/**
 * Why `prefix` is not a valid `path_prefix` for listing, or null. It is `/` (the whole store) or a
 * valid path followed by `/`, so it matches whole segments only.
 */
export function pathPrefixProblem(prefix: string): string | null {
  if (prefix === "/") return null;
  if (!prefix.endsWith("/")) return "must end with / (such as /notes/), so it matches whole segments";
  return memoryPathProblem(prefix.slice(0, -1));
}

/** Every proper ancestor of a valid path: `/a/b/c` has `/a` and `/a/b`. */
export function ancestorPaths(path: string): string[] {
  const segments = path.slice(1).split("/");
  return segments.slice(0, -1).map((_, i) => `/${segments.slice(0, i + 1).join("/")}`);
}

/**
 * What a list with `depth` shows for a memory at `path` under `prefix`: the path itself when it is
 * at most `depth` segments below the prefix (or depth is 0), else the directory marker it rolls
 * into (`prefix` plus `depth` segments and a trailing `/`).
 */
export function listedAs(path: string, prefix: string, depth: number): { prefix: boolean; path: string } {
  if (depth === 0) return { prefix: false, path };
  const below = path.slice(prefix.length).split("/");
  if (below.length <= depth) return { prefix: false, path };
  return { prefix: true, path: `${prefix}${below.slice(0, depth).join("/")}/` };
}
