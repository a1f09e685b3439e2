/**
 * grep: lines matching a regular expression, as `path:line:text`, searched by GNU grep inside the
 * sandbox. Perl-compatible syntax (`grep -P`, closest to the regex flavours models write: `\d`,
 * `(?:...)`, lookarounds) where this grep has it, extended (`-E`) otherwise.
 *
 * Skipped: binary files, `.git`, `node_modules` (as the SDK's own grep does) and the tools' state
 * directory; FIFOs and devices met while recursing. A FIFO named as `path` itself is read, as GNU
 * grep does with its operands: the call then waits (at most TIMEOUT_MS) for a writer.
 */
import {
  anchorPath,
  complaint,
  failure,
  handTool,
  keepWholeLines,
  MAX_TOOL_OUTPUT_BYTES,
  ok,
  optionalString,
  requiredString,
  runScript,
  STATE_DIR,
  wholeLines,
} from "./common.js";

const TIMEOUT_MS = 60_000;
export const MAX_GREP_LINES = 250;
const MAX_LINE_CHARS = 2_000;

/**
 * `$1` is the pattern, `$2` the file or directory ("" = the workspace, printed without `./`).
 * grep replaces the shell (`exec`): it is the process the tier's parent-death signal covers, and
 * no pipe stage outlives it. So it is not stopped once enough is captured: it walks on (at most
 * TIMEOUT_MS); `-m` at least stops reading a file once it has shown enough of it.
 */
const SCRIPT = `
pattern=$1
root=$2
if [ -n "$root" ] && [ ! -e "$root" ]; then exit 64; fi
syntax=-E
grep -qP '' /dev/null 2>/dev/null
if [ $? -ne 2 ]; then syntax=-P; fi
set -- -r -n -H -Z -I -m ${MAX_GREP_LINES + 1} --color=never --exclude-dir=.git --exclude-dir=node_modules \\
  --exclude-dir=${STATE_DIR} "$syntax" -e "$pattern"
if [ -n "$root" ]; then set -- "$@" -- "$root"; fi
exec grep "$@"
`;

/**
 * grep's `-Z` output (`path NUL line:text` per line) for the model: sorted by path (grep walks in
 * directory order, which differs between filesystems), `path:line:text` with the operand's `./`
 * prefix dropped, long lines cut, at most `maxLines`.
 */
export function grepLines(
  stdout: string,
  options: { stripPrefix: string; maxLines: number; maxLineChars: number },
): { lines: string[]; more: boolean } {
  const all = stdout.split("\n");
  if (all.at(-1) === "") all.pop();
  const matches = all.map((line) => {
    const nul = line.indexOf("\0");
    const path = nul === -1 ? "" : line.slice(0, nul);
    const bare = path.startsWith(options.stripPrefix) ? path.slice(options.stripPrefix.length) : path;
    return { path, text: nul === -1 ? line : `${bare}:${line.slice(nul + 1)}` };
  });
  // Stable: a file's lines keep their order.
  matches.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const lines = matches
    .slice(0, options.maxLines)
    .map(({ text }) =>
      text.length > options.maxLineChars ? `${text.slice(0, options.maxLineChars)} [line cut]` : text,
    );
  return { lines, more: all.length > options.maxLines };
}

export const grep = handTool({
  spec: {
    name: "grep",
    description:
      "Search file contents in the sandbox for a regex (Perl-compatible). Prints path:line:text for " +
      `each matching line, at most ${MAX_GREP_LINES}; binary files, .git and node_modules are skipped.`,
    input_schema: {
      type: "object",
      properties: {
        pattern: { type: "string" },
        path: { type: "string", description: "File or directory to search in. Defaults to the workdir." },
      },
      required: ["pattern"],
    },
  },
  repeatable: true,
  async run(sandbox, input, signal) {
    const pattern = requiredString(input, "pattern");
    const path = optionalString(input, "path");
    const operand = path === undefined ? "" : anchorPath(path);
    const result = await runScript(sandbox, "awaken-grep", SCRIPT, [pattern, operand], {
      timeoutMs: TIMEOUT_MS,
      maxOutputBytes: 1024 * 1024,
      signal,
    });
    if (result.exitCode === 64) return failure("grep", `${path}: no such file or directory`);
    if (result.stdout === "") {
      if (result.timedOut) return failure("grep", `timed out after ${TIMEOUT_MS} ms: narrow the path`);
      if (result.exitCode === 1) return ok("no matches");
      return failure("grep", complaint(result).replace(/^grep: /gm, ""));
    }
    // Past the capture limit the last line may be cut short: drop it.
    const { lines, more } = grepLines(result.truncated ? wholeLines(result.stdout).kept : result.stdout, {
      stripPrefix: operand.startsWith("./") ? "./" : "",
      maxLines: MAX_GREP_LINES,
      maxLineChars: MAX_LINE_CHARS,
    });
    const notes: string[] = [];
    const { kept, cut } = keepWholeLines(`${lines.join("\n")}\n`, MAX_TOOL_OUTPUT_BYTES);
    if (cut) notes.push(`[output truncated after ${MAX_TOOL_OUTPUT_BYTES} bytes]`);
    else if (more || result.truncated) notes.push(`[more matches not shown: narrow the pattern or the path]`);
    if (result.timedOut) notes.push(`[the search was cut short after ${TIMEOUT_MS} ms]`);
    else if (result.exitCode === 2)
      notes.push(`[some files could not be searched: ${complaint(result).replace(/^grep: /gm, "")}]`);
    return ok(`${kept}${notes.join("\n")}`.replace(/\n$/, ""));
  },
});
