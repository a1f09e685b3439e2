/**
 * How every launcher of ours runs bash: with no startup file and nothing taken from its
 * environment but variables. A `bash -c` whose stdin is a socket (Node's stdio pipes are
 * socketpairs) and that has no SHLVL sources /etc/bash.bashrc and `~/.bashrc` (Debian builds bash
 * to, for rshd and sshd); a non-interactive one sources `$BASH_ENV`; any bash defines the
 * functions exported in `BASH_FUNC_*` variables. `--norc --noprofile` stop the first, privileged
 * mode (`-p`) the other two, so nothing runs before our script: a launcher runs as host root, or
 * carries a process's secrets, over a HOME the sandbox may write.
 */
export const NO_STARTUP_FILES = ["--norc", "--noprofile", "-p"] as const;

/** bash's arguments to run `script` with `$0` = `name`, reading no startup file. */
export function launcherBashArgs(script: string, name: string): string[] {
  return [...NO_STARTUP_FILES, "-c", script, name];
}
