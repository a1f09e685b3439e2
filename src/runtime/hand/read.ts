/**
 * read: a text file's lines, numbered, from inside the sandbox: a path the sandbox made (a
 * symlink) resolves as the sandbox sees it, never on the host (a planted link could reach host files).
 * Anything but a regular file is refused before it is opened: opening a FIFO would block, a device
 * may never end.
 */
import {
  anchorPath,
  complaint,
  failure,
  handTool,
  InputError,
  MAX_TOOL_OUTPUT_BYTES,
  ok,
  requiredString,
  runScript,
  wholeLines,
} from "./common.js";

const TIMEOUT_MS = 30_000;

/** The file checks `read` and `edit` share; each failure has its own exit code. */
export const FILE_CHECKS = `
p=$1
if [ -d "$p" ]; then exit 65; fi
if [ -L "$p" ] && [ ! -e "$p" ]; then readlink -- "$p" >&2; exit 63; fi
if [ ! -e "$p" ]; then exit 64; fi
if [ ! -f "$p" ]; then exit 66; fi
if [ ! -r "$p" ]; then exit 67; fi
`;

/** Why the checks refused a file, or undefined when the exit code is not one of theirs. */
export function fileCheckFailure(exitCode: number | null, path: string, stderr: string): string | undefined {
  switch (exitCode) {
    case 63:
      return `${path}: no such file or directory (a symbolic link to ${stderr.trim()}, which does not exist in the sandbox)`;
    case 64:
      return `${path}: no such file or directory`;
    case 65:
      return `${path}: is a directory (glob lists the files in it)`;
    case 66:
      return `${path} is not a regular file (a FIFO, socket or device): not opening it`;
    case 67:
      return `${path}: permission denied`;
    case 68:
      return `${path} looks like a binary file (it holds NUL bytes): not showing it`;
    default:
      return undefined;
  }
}

/**
 * Prints lines `$2`..`$3` (`$3` = 0: to the end) as `%6d<TAB>line`, like `cat -n`, and stops once
 * it has printed more than `$4` bytes (a huge file is not read to its end for nothing; lines are
 * cut to `$4` bytes first so a huge line is never held whole). When it prints none, it reports the
 * file's line count on stderr. Reading stdin keeps the file name away from awk's operand parsing.
 */
const SCRIPT = `${FILE_CHECKS}
if [ "$(head -c 8192 <"$p" | tr -dc '\\000' | wc -c)" -gt 0 ]; then exit 68; fi
LC_ALL=C cut -b "1-$4" <"$p" | LC_ALL=C awk -v first="$2" -v last="$3" -v max="$4" '
  NR >= first && (last == 0 || NR <= last) {
    printf "%6d\\t%s\\n", NR, $0
    shown++
    printed += length($0) + 8
    if (printed > max) exit
  }
  last != 0 && NR >= last { exit }
  END { if (!shown) printf "lines=%d\\n", NR > "/dev/stderr" }
'
`;

export interface LineRange {
  first: number;
  /** 0: to the end of the file. */
  last: number;
}

/** `view_range` as the SDK takes it: `[start, end]`, 1-indexed, inclusive; end ≤ 0 means to the end. */
export function parseViewRange(value: unknown): LineRange {
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
    return { first: 1, last: 0 };
  }
  if (!Array.isArray(value) || value.length !== 2 || !value.every((n) => Number.isInteger(n))) {
    throw new InputError("view_range must be [start_line, end_line]");
  }
  const [start, end] = value as [number, number];
  const first = Math.max(1, start);
  if (end > 0 && end < first) throw new InputError(`view_range [${start}, ${end}] ends before it starts`);
  return { first, last: Math.max(end, 0) };
}

export const read = handTool({
  spec: {
    name: "read",
    description:
      "Read a UTF-8 text file in the sandbox (relative to the workspace, or absolute), with line " +
      "numbers. view_range [start_line, end_line] (1-indexed, inclusive; end -1 = to the end) " +
      `reads part of it. Output past ${MAX_TOOL_OUTPUT_BYTES} bytes is cut at a line.`,
    input_schema: {
      type: "object",
      properties: {
        file_path: { type: "string" },
        view_range: {
          type: "array",
          items: { type: "integer" },
          description: "[start_line, end_line] 1-indexed inclusive",
        },
      },
      required: ["file_path"],
    },
  },
  repeatable: true,
  async run(sandbox, input, signal) {
    const path = requiredString(input, "file_path");
    const range = parseViewRange(input.view_range);
    const result = await runScript(
      sandbox,
      "awaken-read",
      SCRIPT,
      [anchorPath(path), String(range.first), String(range.last), String(MAX_TOOL_OUTPUT_BYTES + 1)],
      { timeoutMs: TIMEOUT_MS, maxOutputBytes: MAX_TOOL_OUTPUT_BYTES, signal },
    );
    if (result.exitCode !== 0 || result.timedOut) {
      const reason = result.timedOut
        ? `timed out after ${TIMEOUT_MS} ms`
        : fileCheckFailure(result.exitCode, path, result.stderr);
      return failure("read", reason ?? `${path}: ${complaint(result)}`);
    }
    if (result.stdout === "") {
      const lines = Number(/lines=(\d+)/.exec(result.stderr)?.[1] ?? 0);
      return ok(
        lines === 0 ? `(${path} is empty)` : `(${path} has ${lines} lines; none from line ${range.first})`,
      );
    }
    if (!result.truncated) return ok(result.stdout);
    const { kept, partialLine } = wholeLines(result.stdout);
    if (partialLine) {
      return ok(`${kept}\n[line ${range.first} alone is longer than ${MAX_TOOL_OUTPUT_BYTES} bytes: cut]`);
    }
    const shownTo = Number(/^\s*(\d+)\t/.exec(kept.slice(kept.lastIndexOf("\n", kept.length - 2) + 1))?.[1]);
    return ok(
      `${kept}[output truncated after ${MAX_TOOL_OUTPUT_BYTES} bytes: lines ${range.first}–${shownTo} shown; ` +
        `view_range [${shownTo + 1}, ...] reads on]`,
    );
  },
});
