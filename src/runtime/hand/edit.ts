/**
 * edit: an exact string replacement. The file is read inside the sandbox (as base64, so its bytes
 * arrive intact), replaced here, and written back inside the sandbox the way `write` does: the
 * host never opens a path the sandbox could have made a link.
 */
import {
  anchorPath,
  complaint,
  failure,
  handTool,
  ok,
  optionalBoolean,
  requiredString,
  requiredText,
  runScript,
} from "./common.js";
import { FILE_CHECKS, fileCheckFailure } from "./read.js";
import { writeInSandbox } from "./write.js";

const TIMEOUT_MS = 30_000;
/** The whole file is held in memory (twice): larger files are refused. */
export const MAX_EDIT_BYTES = 1024 * 1024;

const SCRIPT = `${FILE_CHECKS}
size=$(stat -L -c %s -- "$p") || exit 70
if [ "$size" -gt "$2" ]; then echo "$size" >&2; exit 69; fi
exec base64 -w 0 <"$p"
`;

export type EditOutcome = { updated: string; replacements: number } | { error: string };

/** The replacement itself: `old` must occur exactly once, or at least once with `replaceAll`. */
export function applyEdit(
  text: string,
  path: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): EditOutcome {
  const pieces = text.split(oldString);
  const count = pieces.length - 1;
  if (count === 0) return { error: `old_string not found in ${path}` };
  if (count > 1 && !replaceAll) {
    return {
      error:
        `old_string appears ${count} times in ${path} (must be unique): include more of the ` +
        "surrounding text, or set replace_all to replace every occurrence",
    };
  }
  return { updated: pieces.join(newString), replacements: count };
}

/** The file's text, or undefined when it holds NUL bytes or is not valid UTF-8 (a BOM is kept). */
function utf8Text(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export const edit = handTool({
  spec: {
    name: "edit",
    description:
      "Replace old_string with new_string in a text file in the sandbox. old_string must be unique " +
      "unless replace_all.",
    input_schema: {
      type: "object",
      properties: {
        file_path: { type: "string" },
        old_string: { type: "string" },
        new_string: { type: "string" },
        replace_all: { type: "boolean" },
      },
      required: ["file_path", "old_string", "new_string"],
    },
  },
  // Not safe to repeat: after the first run, a second may find the new text and replace again, or
  // fail where the first succeeded.
  repeatable: false,
  async run(sandbox, input, signal) {
    const path = requiredString(input, "file_path");
    const oldString = requiredString(input, "old_string");
    const newString = requiredText(input, "new_string");
    const replaceAll = optionalBoolean(input, "replace_all");

    const read = await runScript(sandbox, "awaken-edit", SCRIPT, [anchorPath(path), String(MAX_EDIT_BYTES)], {
      timeoutMs: TIMEOUT_MS,
      maxOutputBytes: Math.ceil(MAX_EDIT_BYTES / 3) * 4 + 1024,
      signal,
    });
    if (read.exitCode === 69 || (read.exitCode === 0 && read.truncated)) {
      const size = read.exitCode === 69 ? `${read.stderr.trim()} bytes` : "larger than it was a moment ago";
      return failure(
        "edit",
        `${path} is ${size}, over the ${MAX_EDIT_BYTES}-byte limit of this tool: edit it with bash (sed, a script) instead`,
      );
    }
    if (read.exitCode !== 0 || read.timedOut) {
      return failure(
        "edit",
        fileCheckFailure(read.exitCode, path, read.stderr) ?? `${path}: ${complaint(read)}`,
      );
    }
    const text = utf8Text(Buffer.from(read.stdout, "base64"));
    if (text === undefined) return failure("edit", `${path} is not a UTF-8 text file: not editing it`);
    const outcome = applyEdit(text, path, oldString, newString, replaceAll);
    if ("error" in outcome) return failure("edit", outcome.error);
    const error = await writeInSandbox(sandbox, path, outcome.updated, signal);
    if (error !== undefined) return failure("edit", `writing ${error}`);
    return ok(`edited ${path} (${outcome.replacements} replacement(s))`);
  },
});
