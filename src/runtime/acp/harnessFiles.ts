/**
 * ACP's `fs/read_text_file` and `fs/write_text_file`, served inside the session's sandbox with the
 * Hand tools' own scripts (their file checks, their atomic write) behind the workspace prologue
 * (harnessPaths.ts): every byte is read and written by the sandbox's processes, as its uid, with
 * its isolation.
 */
import {
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  RequestError,
  type WriteTextFileRequest,
  type WriteTextFileResponse,
} from "@agentclientprotocol/sdk";
import type { ExecResult, Sandbox } from "../../sandbox/ports.js";
import { complaint, runScript } from "../hand/common.js";
import { FILE_CHECKS } from "../hand/read.js";
import { WRITE_SCRIPT } from "../hand/write.js";
import { CONFINE, confineFailure, invalid, quoted, workspacePathParam } from "./harnessPaths.js";

const TIMEOUT_MS = 30_000;
/** Lines past this are never asked for honestly; bounding them keeps `tail`/`head` operands sane. */
const MAX_LINE_NUMBER = 2 ** 31 - 1;

/**
 * `$2` = first line (1-based), `$3` = how many lines (0: all), `$4` = bytes to print at most.
 * `tail`/`head` pass the bytes through unchanged (no newline added to a last line that had none),
 * and stop reading a huge file once `$4` bytes are out.
 */
const READ_SCRIPT = `${CONFINE}${FILE_CHECKS}
if [ "$3" -gt 0 ]; then tail -n "+$2" -- "$p" | head -n "$3"; else tail -n "+$2" -- "$p"; fi | head -c "$4"
`;

function lineParam(value: unknown, what: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_LINE_NUMBER) {
    throw invalid(`${what} must be a positive integer (at most ${MAX_LINE_NUMBER})`);
  }
  return value;
}

function failed(result: ExecResult, what: string, path: string): RequestError {
  const reason = result.timedOut ? `timed out after ${TIMEOUT_MS} ms` : complaint(result);
  return RequestError.internalError(undefined, `could not ${what} ${quoted(path)}: ${reason.slice(0, 500)}`);
}

export async function readTextFile(
  sandbox: Sandbox,
  params: ReadTextFileRequest,
  maxBytes: number,
  signal: AbortSignal,
): Promise<ReadTextFileResponse> {
  const path = workspacePathParam(params.path, sandbox.workspacePath, "path");
  const line = lineParam(params.line, "line") ?? 1;
  const limit = lineParam(params.limit, "limit") ?? 0;
  const result = await runScript(
    sandbox,
    "awaken-acp-read",
    READ_SCRIPT,
    [path, sandbox.workspacePath, String(line), String(limit), String(maxBytes + 1)],
    // The script prints one byte past the bound when there is more: the capture is then truncated.
    { timeoutMs: TIMEOUT_MS, maxOutputBytes: maxBytes, signal },
  );
  const refused = confineFailure(result.exitCode, "path", path);
  if (refused) throw refused;
  switch (result.exitCode) {
    case 63:
      throw invalid(`path ${quoted(path)} is a symbolic link that cannot be resolved (a loop?)`);
    case 64:
      throw RequestError.resourceNotFound(path);
    case 65:
      throw invalid(`path ${quoted(path)} is a directory`);
    case 66:
      throw invalid(`path ${quoted(path)} is not a regular file (a FIFO, socket or device)`);
    case 67:
      throw invalid(`path ${quoted(path)}: permission denied`);
  }
  if (result.exitCode !== 0 || result.timedOut || result.limitHit) throw failed(result, "read", path);
  if (result.truncated) {
    throw invalid(
      `${quoted(path)} holds more than ${maxBytes} bytes from line ${line}: read it in parts with line and limit`,
    );
  }
  if (result.stdout.includes("\0"))
    throw invalid(`${quoted(path)} looks like a binary file (it holds NUL bytes)`);
  return { content: result.stdout };
}

export async function writeTextFile(
  sandbox: Sandbox,
  params: WriteTextFileRequest,
  maxBytes: number,
  signal: AbortSignal,
): Promise<WriteTextFileResponse> {
  const path = workspacePathParam(params.path, sandbox.workspacePath, "path");
  const content: unknown = params.content;
  if (typeof content !== "string") throw invalid("content must be a string");
  if (Buffer.byteLength(content, "utf8") > maxBytes)
    throw invalid(`content is larger than ${maxBytes} bytes`);
  if (content.includes("\0")) throw invalid("content holds a NUL byte: only text files are written");
  const result = await runScript(
    sandbox,
    "awaken-acp-write",
    `${CONFINE}${WRITE_SCRIPT}`,
    [path, sandbox.workspacePath],
    { stdin: content, timeoutMs: TIMEOUT_MS, maxOutputBytes: 8192, signal },
  );
  const refused = confineFailure(result.exitCode, "path", path);
  if (refused) throw refused;
  if (result.exitCode === 65) throw invalid(`path ${quoted(path)} is a directory`);
  if (result.exitCode !== 0 || result.timedOut || result.limitHit) throw failed(result, "write", path);
  return {};
}
