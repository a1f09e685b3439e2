import { launcherBashArgs } from "./launcherShell.js";

/**
 * How a process in a bwrap sandbox gets variables whose values may be secrets. bwrap's own
 * `--setenv` puts them on its command line, which every host user can read in /proc; so bwrap runs
 * `bash … -c ENVIRONMENT_PREAMBLE awaken-process <argv…>` instead (`preambleArgv`), and the host
 * writes the variables on the process's stdin first: the count, then each `NAME=value`, every field
 * NUL-terminated. bash reads a pipe one byte at a time, so nothing past the last NUL is consumed:
 * the rest of stdin is the process's own. argv is exec'd as it is (`exec --`), never parsed by a
 * shell. That bash reads no startup file (launcherShell.ts): a `.bashrc` the sandbox's commands
 * wrote could otherwise redefine `export` or `exec` and read the secrets on their way through.
 */
export const ENVIRONMENT_PREAMBLE =
  'IFS= read -r -d "" n && [[ $n =~ ^[0-9]{1,3}$ ]] || exit 125; ' +
  'for ((i = 0; i < n; i++)); do IFS= read -r -d "" kv || exit 125; export -- "$kv"; done; ' +
  'exec -- "$@"';

/** `$0` of the preamble's shell (what its own error messages are prefixed with). */
export const PREAMBLE_NAME = "awaken-process";

/** The argv that runs `argv` behind the preamble, with `bashPath` reading no startup file. */
export function preambleArgv(bashPath: string, argv: readonly string[]): string[] {
  return [bashPath, ...launcherBashArgs(ENVIRONMENT_PREAMBLE, PREAMBLE_NAME), ...argv];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The bytes to write on stdin ahead of anything else; the caller zeroes them once written. */
export function environmentPreamble(env: Readonly<Record<string, string>>): Buffer {
  const entries = Object.entries(env);
  if (entries.length > 999) throw new Error("too many variables for one process");
  const parts = [Buffer.from(`${entries.length}\0`)];
  for (const [name, value] of entries) {
    if (!NAME.test(name)) throw new Error(`not a variable name: ${JSON.stringify(name)}`);
    if (value.includes("\0")) throw new Error(`the value of ${name} contains a NUL character`);
    parts.push(Buffer.from(`${name}=${value}\0`, "utf8"));
  }
  const joined = Buffer.concat(parts);
  for (const part of parts) part.fill(0);
  return joined;
}
