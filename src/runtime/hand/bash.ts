/**
 * bash: one command per call, each in a fresh process inside the sandbox (nothing of the sandbox
 * lives between execs), made to feel like the SDK's persistent shell: the working directory and
 * the exported variables a call leaves behind are saved in the workspace (`.awaken/bash/`) and
 * restored before the next call. Not carried over: unexported variables, functions, aliases,
 * shell options and background jobs (the process group dies with the call).
 */
import {
  failure,
  handTool,
  MAX_TOOL_OUTPUT_BYTES,
  ok,
  optionalBoolean,
  optionalPositiveInteger,
  optionalString,
  runScript,
  STATE_DIR,
} from "./common.js";

const DEFAULT_TIMEOUT_MS = 120_000;
const MAX_TIMEOUT_MS = 600_000;

/**
 * Runs the command (read from stdin, so its size is not bounded by argv) in this shell with `eval`,
 * so `cd` and `export` take effect here and are saved on the way out, `exit` included. The
 * command's own stdin is /dev/null: a command that reads it gets EOF instead of hanging.
 * `$1` is `restart` to forget the saved state first. Names are prefixed so a command is unlikely
 * to clash with them; those the save needs are read-only.
 */
export const BASH_WRAPPER = `
__awaken_state=$PWD/${STATE_DIR}/bash
readonly __awaken_state
if [ "$1" = restart ]; then command rm -rf -- "$__awaken_state"; fi
__awaken_cmd=$(command cat)
exec </dev/null
if [ -z "$__awaken_cmd" ]; then exit 0; fi
if [ -r "$__awaken_state/env" ]; then builtin . "$__awaken_state/env" 2>/dev/null; fi
if [ -r "$__awaken_state/cwd" ]; then
  IFS= builtin read -r -d '' __awaken_cwd <"$__awaken_state/cwd"
  builtin cd -- "$__awaken_cwd" 2>/dev/null ||
    builtin printf '[the working directory %s is gone; starting in the workspace]\\n' "$__awaken_cwd" >&2
fi
__awaken_save() {
  builtin set +eu
  builtin export -n PWD OLDPWD SHLVL
  command mkdir -p -- "$__awaken_state" &&
    builtin export -p >"$__awaken_state/env.new" &&
    builtin printf '%s' "$PWD" >"$__awaken_state/cwd.new" &&
    command mv -f -- "$__awaken_state/env.new" "$__awaken_state/env" &&
    command mv -f -- "$__awaken_state/cwd.new" "$__awaken_state/cwd"
} 2>/dev/null
trap __awaken_save EXIT
builtin eval "$__awaken_cmd
"
`;

export const bash = handTool({
  spec: {
    name: "bash",
    description:
      "Run a bash command in the session's sandbox. The working directory (at first the workspace) " +
      "and exported variables persist across calls (restart: true resets them); background jobs do " +
      "not. Returns stdout, stderr and the exit code; output past " +
      `${MAX_TOOL_OUTPUT_BYTES} bytes is cut.`,
    input_schema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command to run" },
        restart: { type: "boolean", description: "Restart the persistent shell before running" },
        timeout_ms: {
          type: "integer",
          description: `Per-call timeout in milliseconds (default ${DEFAULT_TIMEOUT_MS}, at most ${MAX_TIMEOUT_MS})`,
        },
      },
    },
  },
  // A command may append to a file, call an API, move money: never assume it can run twice.
  repeatable: false,
  async run(sandbox, input, signal) {
    const command = optionalString(input, "command");
    const restart = optionalBoolean(input, "restart");
    const timeoutMs = Math.min(
      optionalPositiveInteger(input, "timeout_ms") ?? DEFAULT_TIMEOUT_MS,
      MAX_TIMEOUT_MS,
    );
    if (command === undefined || command.trim() === "") {
      if (!restart) return failure("bash", "command is required");
      const reset = await runScript(sandbox, "bash", BASH_WRAPPER, ["restart"], {
        stdin: "",
        timeoutMs,
        maxOutputBytes: MAX_TOOL_OUTPUT_BYTES,
        signal,
      });
      return reset.exitCode === 0
        ? ok("bash session restarted")
        : failure("bash", `restart failed: ${reset.stderr.trim() || `exit code ${reset.exitCode}`}`);
    }
    const result = await runScript(sandbox, "bash", BASH_WRAPPER, restart ? ["restart"] : [], {
      stdin: command,
      timeoutMs,
      maxOutputBytes: MAX_TOOL_OUTPUT_BYTES,
      signal,
    });
    const parts: string[] = [];
    if (result.stdout !== "") parts.push(result.stdout.replace(/\n$/, ""));
    if (result.stderr !== "") parts.push(`[stderr]\n${result.stderr.replace(/\n$/, "")}`);
    if (result.truncated) parts.push(`[output truncated after ${MAX_TOOL_OUTPUT_BYTES} bytes]`);
    if (result.timedOut) parts.push(`[killed after ${timeoutMs} ms: the command did not finish in time]`);
    if (result.limitHit) parts.push(`[${result.limitHit}]`);
    parts.push(`[exit code: ${result.exitCode ?? "killed"}]`);
    return {
      text: parts.join("\n"),
      isError: result.timedOut || result.exitCode !== 0 || result.limitHit !== undefined,
    };
  },
});
