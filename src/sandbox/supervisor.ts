import { readFileSync } from "node:fs";

/**
 * The supervisor a live bwrap sandbox runs as its command: the Perl program `supervisor.pl` (next
 * to this file; its header documents the protocol), handed to `perl -e` so that nothing of the host
 * needs to be visible inside the sandbox. This module writes its requests and parses its messages.
 *
 * host → supervisor
 *   {"op":"exec","id":N,"timeoutMs":N,"maxOutputBytes":N,"argv":["<hex>",...],"stdin":"<hex>"}
 *   {"op":"kill","id":N}                       abort that command
 * supervisor → host
 *   {"op":"ready","pid":N}                     once, when it is listening
 *   {"op":"accepted","id":N}                   before it forks: from here on the command may run
 *   {"op":"data","id":N,"fd":1|2,"hex":"…"}    output, at most maxOutputBytes in all
 *   {"op":"exit","id":N,"code":N|null,"signal":N|null,"timedOut":0|1,"aborted":0|1,"truncated":0|1}
 *   {"op":"exit","id":N,"error":"…"}           the command could not be started
 */

/** Syscall numbers the supervisor needs (Perl's `syscall`), per Node `process.arch`. */
const SYSCALLS: Record<string, { clockGettime: number; prctl: number }> = {
  x64: { clockGettime: 228, prctl: 157 },
  arm64: { clockGettime: 113, prctl: 167 },
};

/**
 * Where the program is, tried in order: next to this module (running from src/, as the tests
 * do), then src/ beside dist/ (the build emits only JavaScript; src/ ships with the package).
 */
const SCRIPT_LOCATIONS = ["./supervisor.pl", "../../src/sandbox/supervisor.pl"];

let script: string | null = null;

/** The supervisor's source, read once; throws naming the places it looked when it is missing. */
export function supervisorScript(): string {
  if (script !== null) return script;
  const tried: string[] = [];
  for (const location of SCRIPT_LOCATIONS) {
    const url = new URL(location, import.meta.url);
    try {
      script = readFileSync(url, "utf8");
      return script;
    } catch {
      tried.push(url.pathname);
    }
  }
  throw new Error(`the bwrap tier's supervisor program is missing (looked at ${tried.join(", ")})`);
}

/**
 * `perl -e SCRIPT …`: the argv bwrap runs as the sandbox's command. With `proxySocket` (the host
 * egress proxy's socket as the sandbox sees it) the supervisor relays 127.0.0.1:3128 to it.
 */
export function supervisorArgv(
  perlPath: string,
  arch: string = process.arch,
  proxySocket?: string,
): string[] {
  const numbers = SYSCALLS[arch];
  if (!numbers)
    throw new Error(`the bwrap tier's supervisor is built for x86_64 and aarch64 only, not ${arch}`);
  const argv = [perlPath, "-e", supervisorScript(), String(numbers.clockGettime), String(numbers.prctl)];
  if (proxySocket !== undefined) argv.push(proxySocket);
  return argv;
}

/** A request line, strings hex-encoded. */
export function execLine(
  id: number,
  request: { argv: string[]; stdin?: string; timeoutMs: number; maxOutputBytes: number },
): string {
  for (const arg of request.argv) {
    if (arg.includes("\0")) throw new TypeError("exec: an argv entry contains a NUL byte");
  }
  const hex = (text: string) => Buffer.from(text, "utf8").toString("hex");
  const timeoutMs = Math.max(0, Math.ceil(request.timeoutMs));
  const maxOutputBytes = Math.max(0, Math.floor(request.maxOutputBytes));
  return (
    `{"op":"exec","id":${id},"timeoutMs":${timeoutMs},"maxOutputBytes":${maxOutputBytes},` +
    `"argv":[${request.argv.map((arg) => `"${hex(arg)}"`).join(",")}],"stdin":"${hex(request.stdin ?? "")}"}\n`
  );
}

export function killLine(id: number): string {
  return `{"op":"kill","id":${id}}\n`;
}

export type SupervisorMessage =
  | { op: "ready"; pid: number }
  | { op: "accepted"; id: number }
  | { op: "data"; id: number; fd: 1 | 2; hex: string }
  | {
      op: "exit";
      id: number;
      code?: number | null;
      signal?: number | null;
      timedOut?: 0 | 1;
      aborted?: 0 | 1;
      truncated?: 0 | 1;
      error?: string;
    };

/** Parses one line; null for anything that is not a message of the protocol. */
export function parseMessage(line: string): SupervisorMessage | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const message = value as { op?: unknown; id?: unknown; pid?: unknown; fd?: unknown; hex?: unknown };
  switch (message.op) {
    case "ready":
      return typeof message.pid === "number" ? (message as SupervisorMessage) : null;
    case "accepted":
    case "exit":
      return typeof message.id === "number" ? (message as SupervisorMessage) : null;
    case "data":
      return typeof message.id === "number" &&
        (message.fd === 1 || message.fd === 2) &&
        typeof message.hex === "string"
        ? (message as SupervisorMessage)
        : null;
    default:
      return null;
  }
}
