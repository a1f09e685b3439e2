/**
 * glob: files matching a pattern, newest first, found by bash itself (`globstar`) inside the
 * sandbox. The pattern reaches bash as an argv entry expanded only as a glob (never evaluated);
 * `{a,b}` alternatives, which bash would not expand there, are expanded here first.
 */
import { posix } from "node:path";
import {
  anchorPath,
  complaint,
  failure,
  handTool,
  InputError,
  keepWholeLines,
  MAX_TOOL_OUTPUT_BYTES,
  ok,
  optionalString,
  requiredString,
  runScript,
  STATE_DIR,
} from "./common.js";

const TIMEOUT_MS = 60_000;
export const MAX_GLOB_RESULTS = 200;
const MAX_ALTERNATIVES = 64;

/**
 * `$1` is the directory to search ("" = the workspace), `$2` is `skip` to leave out `.git` and
 * `node_modules` (as the SDK's glob does), the rest are patterns. Prints up to MAX_GLOB_RESULTS + 1
 * regular files (links to one included) as `mtime<TAB>path`, NUL-separated, newest first (ties
 * by name). Hidden files match only a pattern that names them (no `dotglob`), and the tools' state
 * directory never does.
 */
const SCRIPT = `
ws=$PWD
root=$1
vendored=$2
shift 2
if [ -n "$root" ]; then
  if [ ! -e "$root" ]; then exit 64; fi
  if [ ! -d "$root" ]; then exit 71; fi
  cd -- "$root" || exit 70
fi
here=$PWD
shopt -s globstar nullglob extglob
IFS=
for pattern in "$@"; do
  for f in $pattern; do
    [ -f "$f" ] || continue
    if [ "$vendored" = skip ]; then
      case /$f in */.git/* | */node_modules/*) continue ;; esac
    fi
    case $here/$f in "$ws"/${STATE_DIR} | "$ws"/${STATE_DIR}/*) continue ;; esac
    printf '%s\\0' "$f"
  done
done | LC_ALL=C sort -zu | xargs -0 -r stat -L --printf '%.9Y\\t%n\\0' -- |
  LC_ALL=C sort -z -t "$(printf '\\t')" -k1,1nr -k2 | head -z -n ${MAX_GLOB_RESULTS + 1}
`;

/** `a{b,c}d` → `abd`, `acd` (nested too), as bash's brace expansion does; a lone `{x}` stays. */
export function expandBraces(pattern: string): string[] {
  for (let open = 0; open < pattern.length; open++) {
    if (pattern[open] === "\\") {
      open++;
      continue;
    }
    if (pattern[open] !== "{") continue;
    let depth = 0;
    let close = -1;
    const commas: number[] = [];
    for (let i = open; i < pattern.length && close === -1; i++) {
      const char = pattern[i];
      if (char === "\\") i++;
      else if (char === "{") depth++;
      else if (char === "}" && --depth === 0) close = i;
      else if (char === "," && depth === 1) commas.push(i);
    }
    if (close === -1 || commas.length === 0) continue;
    const prefix = pattern.slice(0, open);
    const suffix = pattern.slice(close + 1);
    const bounds = [open, ...commas, close];
    const expanded: string[] = [];
    for (let k = 0; k + 1 < bounds.length; k++) {
      const alternative = pattern.slice((bounds[k] as number) + 1, bounds[k + 1]);
      expanded.push(...expandBraces(prefix + alternative + suffix));
      if (expanded.length > MAX_ALTERNATIVES) {
        throw new InputError(`the pattern expands to more than ${MAX_ALTERNATIVES} alternatives`);
      }
    }
    return expanded;
  }
  return [pattern];
}

/** The patterns bash gets: alternatives expanded, each relative and never climbing out with `..`. */
export function globPatterns(pattern: string): string[] {
  return [...new Set(expandBraces(pattern))].map((alternative) => {
    if (alternative.startsWith("/")) {
      throw new InputError("absolute pattern not permitted; pass a relative pattern (and optionally path)");
    }
    if (alternative.split("/").includes("..")) throw new InputError('".." is not permitted in the pattern');
    return posix.normalize(alternative);
  });
}

export const glob = handTool({
  spec: {
    name: "glob",
    description:
      "Match files in the sandbox against a glob pattern (`*`, `?`, `[...]`, `**` for any depth, " +
      `\`{a,b}\`). Results are mtime-sorted, newest first, at most ${MAX_GLOB_RESULTS}. Hidden files, ` +
      ".git and node_modules match only a pattern that names them.",
    input_schema: {
      type: "object",
      properties: {
        pattern: { type: "string" },
        path: { type: "string", description: "Directory to search in. Defaults to the workdir." },
      },
      required: ["pattern"],
    },
  },
  repeatable: true,
  async run(sandbox, input, signal) {
    const patterns = globPatterns(requiredString(input, "pattern"));
    const path = optionalString(input, "path");
    // A pattern that names `node_modules` (or `.git`) asks for what is in it.
    const named = patterns.some((p) =>
      p.split("/").some((part) => part === "node_modules" || part === ".git"),
    );
    const result = await runScript(
      sandbox,
      "awaken-glob",
      SCRIPT,
      [path === undefined ? "" : anchorPath(path), named ? "" : "skip", ...patterns],
      { timeoutMs: TIMEOUT_MS, maxOutputBytes: 1024 * 1024, signal },
    );
    if (result.timedOut)
      return failure("glob", `timed out after ${TIMEOUT_MS} ms: narrow the pattern or the path`);
    if (result.exitCode === 64) return failure("glob", `${path}: no such file or directory`);
    if (result.exitCode === 71) return failure("glob", `${path}: not a directory`);
    if (result.exitCode !== 0) return failure("glob", complaint(result));
    const files = result.stdout
      .split("\0")
      .filter((record) => record !== "")
      .map((record) => record.slice(record.indexOf("\t") + 1))
      .map((file) => (path === undefined ? file : posix.join(path, file)));
    if (files.length === 0) return ok("no matches");
    const shown = files.slice(0, MAX_GLOB_RESULTS).join("\n");
    const { kept, cut } = keepWholeLines(shown, MAX_TOOL_OUTPUT_BYTES);
    if (cut) return ok(`${kept}[output truncated after ${MAX_TOOL_OUTPUT_BYTES} bytes]`);
    if (files.length > MAX_GLOB_RESULTS) {
      return ok(`${kept}\n[more than ${MAX_GLOB_RESULTS} matches: the ${MAX_GLOB_RESULTS} newest are shown]`);
    }
    return ok(kept);
  },
});
