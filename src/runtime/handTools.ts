/**
 * The built-in Hand tools of `agent_toolset_20260401` that run server-side, inside the session's
 * sandbox. Each declares whether it is safe to repeat: after a crash, a call found started with no
 * result is re-run only if it is (DESIGN.md §3); otherwise its outcome is reported as unknown.
 */
import type { ModelToolSpec } from "../providers/ports.js";
import type { Sandbox } from "../sandbox/ports.js";

export interface HandToolResult {
  text: string;
  isError: boolean;
}

export interface HandTool {
  spec: ModelToolSpec;
  /** Running it twice has the same effect as running it once. */
  repeatable: boolean;
  run(sandbox: Sandbox, input: Record<string, unknown>, signal: AbortSignal): Promise<HandToolResult>;
}

/** Past this much output the rest is dropped and the model is told so. */
export const MAX_TOOL_OUTPUT_BYTES = 30_000;
const DEFAULT_BASH_TIMEOUT_MS = 120_000;
const MAX_BASH_TIMEOUT_MS = 600_000;
const READ_TIMEOUT_MS = 30_000;
const DEFAULT_READ_LIMIT = 2_000;

const bash: HandTool = {
  spec: {
    name: "bash",
    description:
      "Run a bash command in the session's workspace. Returns stdout, stderr and the exit code. " +
      `Output past ${MAX_TOOL_OUTPUT_BYTES} bytes is cut.`,
    input_schema: {
      type: "object",
      properties: {
        command: { type: "string", description: "The command line, run with bash -c." },
        timeout_ms: {
          type: "integer",
          description: `Wall-clock limit (default ${DEFAULT_BASH_TIMEOUT_MS}).`,
        },
      },
      required: ["command"],
    },
  },
  // A command may append to a file, call an API, move money: never assume it can run twice.
  repeatable: false,
  async run(sandbox, input, signal) {
    const command = input.command;
    if (typeof command !== "string" || command.trim() === "") {
      return { text: "bash: `command` must be a non-empty string", isError: true };
    }
    const timeoutMs = clampTimeout(input.timeout_ms);
    const result = await sandbox.exec({
      argv: ["bash", "-c", command],
      timeoutMs,
      maxOutputBytes: MAX_TOOL_OUTPUT_BYTES,
      signal,
    });
    const parts: string[] = [];
    if (result.stdout !== "") parts.push(result.stdout.replace(/\n$/, ""));
    if (result.stderr !== "") parts.push(`[stderr]\n${result.stderr.replace(/\n$/, "")}`);
    if (result.truncated) parts.push(`[output truncated after ${MAX_TOOL_OUTPUT_BYTES} bytes]`);
    if (result.timedOut) parts.push(`[killed after ${timeoutMs} ms: the command did not finish in time]`);
    parts.push(`[exit code: ${result.exitCode ?? "killed"}]`);
    return { text: parts.join("\n"), isError: result.timedOut || result.exitCode !== 0 };
  },
};

const read: HandTool = {
  spec: {
    name: "read",
    description:
      "Read a text file from the workspace, with line numbers. `offset` is the first line (1-based), " +
      `\`limit\` the number of lines (default ${DEFAULT_READ_LIMIT}).`,
    input_schema: {
      type: "object",
      properties: {
        file_path: { type: "string", description: "Path relative to the workspace, or absolute." },
        offset: { type: "integer", minimum: 1 },
        limit: { type: "integer", minimum: 1 },
      },
      required: ["file_path"],
    },
  },
  repeatable: true,
  async run(sandbox, input, signal) {
    const path = input.file_path;
    if (typeof path !== "string" || path === "") {
      return { text: "read: `file_path` must be a non-empty string", isError: true };
    }
    const first = positiveInteger(input.offset) ?? 1;
    const last = first + (positiveInteger(input.limit) ?? DEFAULT_READ_LIMIT) - 1;
    // Read inside the sandbox, never host-side: a path the sandbox made (a symlink) must resolve
    // as the sandbox sees it (sandbox-and-secrets.md, pitfall 4).
    const result = await sandbox.exec({
      argv: [
        "awk",
        "-v",
        `first=${first}`,
        "-v",
        `last=${last}`,
        "--",
        'NR >= first && NR <= last { printf "%6d\\t%s\\n", NR, $0 } NR > last { exit }',
        // An operand like `a=b` would be an awk assignment and `-` stdin: anchor relative paths.
        path.startsWith("/") ? path : `./${path}`,
      ],
      timeoutMs: READ_TIMEOUT_MS,
      maxOutputBytes: MAX_TOOL_OUTPUT_BYTES,
      signal,
    });
    if (result.exitCode !== 0) {
      const reason = result.timedOut ? "timed out" : result.stderr.trim() || `exit code ${result.exitCode}`;
      return { text: `read ${path}: ${reason}`, isError: true };
    }
    const text = result.stdout === "" ? `(no lines ${first}–${last} in ${path})` : result.stdout;
    return {
      text: result.truncated ? `${text}\n[output truncated after ${MAX_TOOL_OUTPUT_BYTES} bytes]` : text,
      isError: false,
    };
  },
};

/** The Hand tools this build runs, by name. The rest of the toolset is not offered to the model. */
export const HAND_TOOLS: ReadonlyMap<string, HandTool> = new Map([bash, read].map((t) => [t.spec.name, t]));

function clampTimeout(value: unknown): number {
  const ms = positiveInteger(value);
  return ms === null ? DEFAULT_BASH_TIMEOUT_MS : Math.min(ms, MAX_BASH_TIMEOUT_MS);
}

function positiveInteger(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 ? value : null;
}
