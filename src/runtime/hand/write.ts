/**
 * write: a whole file, from inside the sandbox, its content passed on stdin. The content lands in
 * a temporary file next to the target, then is renamed over it: a call cut short (kill -9, timeout)
 * leaves the old file or the new one, never half of it, which is what makes it safe to repeat.
 */
import type { Sandbox } from "../../sandbox/ports.js";
import {
  anchorPath,
  complaint,
  failure,
  handTool,
  MAX_TOOL_OUTPUT_BYTES,
  ok,
  requiredString,
  requiredText,
  runScript,
} from "./common.js";

const TIMEOUT_MS = 30_000;

/**
 * `$1` is the target. A symlink is written through (as `>` would), so the link stays a link. An
 * existing file keeps its mode; a new one gets the umask's. Parent directories are created. Exit
 * code 65: `$1` is a directory; 70: the write failed. Shared with the ACP client's `fs/write_text_file`.
 */
export const WRITE_SCRIPT = `
p=$1
if [ -L "$p" ] && t=$(readlink -f -- "$p"); then p=$t; fi
if [ -d "$p" ]; then exit 65; fi
d=$(dirname -- "$p")
mkdir -p -- "$d" || exit 70
tmp=$(mktemp -- "$d/.awaken-write.XXXXXXXX") || exit 70
trap 'rm -f -- "$tmp"' EXIT
cat >"$tmp" || exit 70
if [ -e "$p" ]; then
  chmod --reference="$p" -- "$tmp" 2>/dev/null
else
  chmod -- "$(printf '%o' $((0666 & ~0$(umask))))" "$tmp" || exit 70
fi
mv -fT -- "$tmp" "$p" || exit 70
trap - EXIT
`;

/** Writes `content` to `path` inside the sandbox; the error message, or undefined when it worked. */
export async function writeInSandbox(
  sandbox: Sandbox,
  path: string,
  content: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const result = await runScript(sandbox, "awaken-write", WRITE_SCRIPT, [anchorPath(path)], {
    stdin: content,
    timeoutMs: TIMEOUT_MS,
    maxOutputBytes: MAX_TOOL_OUTPUT_BYTES,
    signal,
  });
  if (result.exitCode === 0 && !result.timedOut && !result.limitHit) return undefined;
  if (result.exitCode === 65) return `${path}: is a directory`;
  return `${path}: ${complaint(result)}`;
}

export const write = handTool({
  spec: {
    name: "write",
    description:
      "Write a UTF-8 text file in the sandbox (relative to the workspace, or absolute), replacing it " +
      "whole and creating parent directories as needed.",
    input_schema: {
      type: "object",
      properties: { file_path: { type: "string" }, content: { type: "string" } },
      required: ["file_path", "content"],
    },
  },
  // The same content written twice leaves the same file.
  repeatable: true,
  async run(sandbox, input, signal) {
    const path = requiredString(input, "file_path");
    const content = requiredText(input, "content");
    const error = await writeInSandbox(sandbox, path, content, signal);
    if (error !== undefined) return failure("write", error);
    return ok(`wrote ${Buffer.byteLength(content, "utf8")} bytes to ${path}`);
  },
});
