/**
 * What every Hand tool shares: the tool contract, input checks, and running a small bash script
 * inside the sandbox with the model's values as separate argv entries (never spliced into the
 * script text).
 */
import type { ModelToolSpec } from "../../providers/ports.js";
import { type ExecResult, NO_STARTUP_FILES, type Sandbox } from "../../sandbox/ports.js";

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

/**
 * The workspace directory holding the tools' own state (the bash tool's working directory and
 * exported variables). glob and grep leave it out of their results.
 */
export const STATE_DIR = ".awaken";

export const ok = (text: string): HandToolResult => ({ text, isError: false });
export const failure = (tool: string, message: string): HandToolResult => ({
  text: `${tool}: ${message}`,
  isError: true,
});

/** A wrong input, reported to the model as the tool's error. */
export class InputError extends Error {}

export function requiredString(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  if (typeof value !== "string" || value === "")
    throw new InputError(`${name} is required (a non-empty string)`);
  return value;
}

/** A string that may be empty (a file's content, a replacement). */
export function requiredText(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  if (typeof value !== "string") throw new InputError(`${name} is required (a string)`);
  return value;
}

export function optionalString(input: Record<string, unknown>, name: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new InputError(`${name} must be a string`);
  return value;
}

export function optionalBoolean(input: Record<string, unknown>, name: string): boolean {
  const value = input[name];
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw new InputError(`${name} must be true or false`);
  return value;
}

export function optionalPositiveInteger(input: Record<string, unknown>, name: string): number | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InputError(`${name} must be a positive integer`);
  }
  return value;
}

/**
 * A path operand no command can misread: `-x` as an option, `a=b` as an awk assignment, `-` as
 * stdin. Relative paths stay relative to the workspace (every command starts there).
 */
export function anchorPath(path: string): string {
  return path.startsWith("/") ? path : `./${path}`;
}

/**
 * Runs `script` with `bash -c`; `args` become `$1`, `$2`, ... (`$0` names the tool in messages).
 * No startup file: no `.bashrc` (read when stdin is a socket), no BASH_ENV or ENV and no exported
 * function (`-p`), the same flags as the sandbox's own launchers (NO_STARTUP_FILES).
 */
export function runScript(
  sandbox: Sandbox,
  tool: string,
  script: string,
  args: string[],
  options: { stdin?: string; timeoutMs: number; maxOutputBytes: number; signal: AbortSignal },
): Promise<ExecResult> {
  return sandbox.exec({
    argv: ["bash", ...NO_STARTUP_FILES, "-c", script, tool, ...args],
    ...options,
  });
}

/** A command's complaint for a message: its first lines of stderr, or how it ended. */
export function complaint(result: ExecResult): string {
  if (result.timedOut) return "timed out";
  if (result.limitHit) return result.limitHit;
  const text = result.stderr.trim();
  return text === "" ? `exit code ${result.exitCode ?? "killed"}` : text.split("\n").slice(0, 5).join("\n");
}

/** `text` without a last line cut short (it does not end in a newline), unless that is its only line. */
export function wholeLines(text: string): { kept: string; partialLine: boolean } {
  if (text === "" || text.endsWith("\n")) return { kept: text, partialLine: false };
  const newline = text.lastIndexOf("\n");
  return newline === -1
    ? { kept: text, partialLine: true }
    : { kept: text.slice(0, newline + 1), partialLine: false };
}

/** At most `maxBytes` UTF-8 bytes of `text`, cut after a whole line when there is one. */
export function keepWholeLines(text: string, maxBytes: number): { kept: string; cut: boolean } {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return { kept: text, cut: false };
  // A multi-byte character split by the cut decodes to U+FFFD; the line it is in is dropped anyway.
  return { kept: wholeLines(bytes.subarray(0, maxBytes).toString("utf8")).kept, cut: true };
}

/** Declares the checks of `run` once: an `InputError` becomes the tool's error result. */
export function handTool(tool: HandTool): HandTool {
  const name = tool.spec.name;
  return {
    ...tool,
    async run(sandbox, input, signal) {
      try {
        return await tool.run(sandbox, input, signal);
      } catch (error) {
        if (error instanceof InputError) return failure(name, error.message);
        throw error;
      }
    },
  };
}
