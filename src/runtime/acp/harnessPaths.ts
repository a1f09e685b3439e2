/**
 * Where a harness's `fs/*` and `terminal/*` requests may reach: absolute paths that resolve inside
 * the session's workspace. The string is checked here (cheap, before anything runs); the
 * resolution (symbolic links included) happens inside the sandbox, as the sandbox sees its files,
 * never on the host: a link planted in the workspace could otherwise name a host file.
 *
 * This confines what the client side does on the harness's behalf. It is not the session's
 * isolation: the harness itself runs in the same sandbox and can reach whatever the sandbox can.
 */
import { posix } from "node:path";
import { RequestError } from "@agentclientprotocol/sdk";
import type { Sandbox } from "../../sandbox/ports.js";
import { runScript } from "../hand/common.js";

/** Longer paths are refused before anything runs (Linux's PATH_MAX). */
export const MAX_PATH_BYTES = 4096;

/** A request the harness got wrong: a JSON-RPC "invalid params" with a message it can act on. */
export function invalid(message: string): RequestError {
  return RequestError.invalidParams(undefined, message);
}

/** A harness string for a message: bounded, printable (it is hostile until shown otherwise). */
export function quoted(value: string): string {
  const shown = value.length > 200 ? `${value.slice(0, 200)}…` : value;
  return JSON.stringify(shown);
}

/**
 * `value` as an absolute path lexically inside `workspace`, normalized; throws invalid params
 * otherwise. `what` names the field in the message.
 */
export function workspacePathParam(value: unknown, workspace: string, what: string): string {
  if (typeof value !== "string" || value === "") throw invalid(`${what} must be a non-empty string`);
  if (Buffer.byteLength(value, "utf8") > MAX_PATH_BYTES) {
    throw invalid(`${what} is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (value.includes("\0")) throw invalid(`${what} contains a NUL byte`);
  // A newline or other control character in a path is never an honest request, and a command
  // substitution would silently drop a trailing one.
  if (/\p{Cc}/u.test(value)) throw invalid(`${what} contains a control character`);
  if (!value.startsWith("/")) throw invalid(`${what} must be an absolute path: ${quoted(value)}`);
  const normalized = posix.normalize(value);
  if (!isWithin(normalized, workspace)) {
    throw invalid(`${what} ${quoted(value)} is outside the workspace ${workspace}`);
  }
  return normalized;
}

function isWithin(path: string, root: string): boolean {
  const base = root.endsWith("/") ? root.slice(0, -1) : root;
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed === base || trimmed.startsWith(`${base}/`);
}

/**
 * The prologue every in-sandbox script of ours starts with: `$1` is the path, `$2` the workspace.
 * It resolves both as the sandbox sees them (links included, missing components allowed), refuses
 * a path outside the workspace, and leaves the resolved path as `$1` and the caller's own
 * arguments after it. Exit codes 71–73 are its own.
 */
export const CONFINE = `
ws=$(realpath -e -- "$2") || exit 71
t=$(realpath -m -- "$1") || exit 72
case $t in "$ws" | "$ws"/*) ;; *) exit 73 ;; esac
shift 2
set -- "$t" "$@"
`;

/** Why the prologue refused, or undefined when the exit code is not one of its own. */
export function confineFailure(
  exitCode: number | null,
  what: string,
  path: string,
): RequestError | undefined {
  switch (exitCode) {
    case 71:
      return RequestError.internalError(undefined, "the workspace is not reachable in the sandbox");
    case 72:
      return invalid(`${what} ${quoted(path)} cannot be resolved (a symbolic link loop?)`);
    case 73:
      return invalid(`${what} ${quoted(path)} resolves outside the workspace (through a symbolic link)`);
    default:
      return undefined;
  }
}

/**
 * Resolves `path` (already checked by `workspacePathParam`) inside the sandbox and requires a
 * directory there: a terminal's working directory.
 */
export async function confinedDirectory(
  sandbox: Sandbox,
  path: string,
  what: string,
  signal: AbortSignal,
): Promise<string> {
  const result = await runScript(
    sandbox,
    "awaken-acp-cwd",
    `${CONFINE}\nif [ ! -d "$1" ]; then exit 64; fi\nprintf '%s' "$1"`,
    [path, sandbox.workspacePath],
    { timeoutMs: 15_000, maxOutputBytes: MAX_PATH_BYTES * 2, signal },
  );
  const refused = confineFailure(result.exitCode, what, path);
  if (refused) throw refused;
  if (result.exitCode === 64) throw invalid(`${what} ${quoted(path)} is not a directory in the sandbox`);
  if (result.exitCode !== 0 || result.timedOut) {
    throw RequestError.internalError(undefined, `${what} could not be checked in the sandbox`);
  }
  return result.stdout;
}
