/**
 * The command line of one bwrap sandbox: `bash` closing inherited descriptors, then `prlimit`
 * (resource limits, inherited across bwrap's exec) wrapping `bwrap` with the flags measured to hold
 * on this kind of host, running `argv`: a session's supervisor (supervisor.ts), or one command
 * (the one-shot sandbox an exec gets while another runs). Pure: the host facts it needs (tool paths, the /bin-/lib layout) are
 * passed in, so the argv can be read and tested alone.
 */

import { EGRESS_PROXY_URL, EGRESS_SANDBOX_DIR } from "./egressProxy.js";
import { launcherBashArgs } from "./launcherShell.js";
import { PACKAGES_MOUNT, packagesEnv, type SandboxMounts } from "./ports.js";
import { mountHostPath } from "./resourceMounts.js";

export interface ResourceLimits {
  /** RLIMIT_CPU: CPU seconds per exec (wall clock is the exec's own timeout). */
  cpuSeconds: number;
  /** RLIMIT_NPROC: counts every process of the sandbox's host uid, so it bounds a fork bomb. */
  processes: number;
  /** RLIMIT_FSIZE: largest single file written (never more than `workspaceBytes`). */
  fileSizeBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /**
   * Size of each of the private tmpfs at /tmp and /dev/shm (memory-backed, so a memory bound too;
   * the rest of /dev is read-only).
   */
  tmpBytes: number;
  /** Memory of the whole sandbox (a cgroup), or of each process where no cgroup is writable. */
  memoryBytes: number;
  /** Disk quota of the session's workspace (workspaceQuota.ts). */
  workspaceBytes: number;
  /** Files and directories the session's workspace may hold (workspaceQuota.ts). */
  workspaceInodes: number;
}

export const DEFAULT_LIMITS: ResourceLimits = {
  cpuSeconds: 600,
  processes: 256,
  fileSizeBytes: 2 ** 30,
  openFiles: 1024,
  tmpBytes: 64 * 2 ** 20,
  // Sized for a 24 GiB host running a handful of sessions at once.
  memoryBytes: 2 * 2 ** 30,
  workspaceBytes: 2 * 2 ** 30,
  // A checkout with its installed dependencies fits (typically tens of thousands); du walks 100 000 in ~0.2 s.
  workspaceInodes: 100_000,
};

/**
 * RLIMIT_AS is kept at 16 GiB: lower breaks WebAssembly, the JVM and Go, which reserve address
 * space they never touch. Memory itself is bounded by the sandbox's cgroup, or by
 * RLIMIT_DATA where none is writable (sandboxMemory.ts).
 */
export const ADDRESS_SPACE_BYTES = 2 ** 34;

/** The extra descriptors the child is spawned with (after stdin, stdout, stderr). */
export const SANDBOX_FDS = { passwd: 3, group: 4, seccomp: 5, gate: 6 } as const;

export const SANDBOX_WORKSPACE = "/workspace";
/** The identity inside the user namespace; the host sees the allocated unprivileged uid instead. */
const INNER_ID = 1000;
const SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The only /etc entries the sandbox sees: what the dynamic loader, TLS, name lookup and `update-
 * alternatives` links need. Binding all of /etc would leak host configuration.
 */
const ETC_ENTRIES = [
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "alternatives",
  "ssl",
  "ca-certificates",
  "nsswitch.conf",
  "localtime",
  "hosts",
  "resolv.conf",
];

/** How a top-level system path (/bin, /lib64, ...) exists on the host: merged-/usr link or dir. */
export type SystemEntry = { path: string; symlinkTo: string } | { path: string; directory: true };

/**
 * bwrap hands every descriptor it inherits to the command, and Node closes only its own (they are
 * close-on-exec). A worker started holding others (a supervisor's pipe, a socket a native module
 * opened) would pass them into every sandbox: close all but stdio and bwrap's three first.
 * `exec -c`: what follows (prlimit, bwrap, and the sandbox's init, whose /proc/1/environ every
 * command can read) starts with an empty environment, not even the variables bash adds.
 */
const CLOSE_INHERITED_FDS = `for fd in /proc/self/fd/*; do fd=\${fd##*/}; if ((fd > ${SANDBOX_FDS.seccomp})); then { exec {fd}>&-; } 2>/dev/null; fi; done; exec -c "$@"`;

/**
 * With a memory cgroup the launcher waits, before it starts anything, until the host has moved it
 * into the cgroup and says `go` on the gate descriptor: whatever bwrap forks is then born inside.
 */
const WAIT_FOR_GATE = `read -r -u ${SANDBOX_FDS.gate} go && [ "$go" = go ] || exit 1; `;

export interface BwrapInvocation {
  bashPath: string;
  prlimitPath: string;
  bwrapPath: string;
  limits: ResourceLimits;
  systemEntries: SystemEntry[];
  workspaceHostPath: string;
  /**
   * Host directory holding the sandbox's egress proxy socket (egressProxy.ts), bound read-only at
   * `EGRESS_SANDBOX_DIR`; the commands get `HTTP(S)_PROXY` pointing at the supervisor's relay.
   * Without it the sandbox has no egress at all.
   */
  egressDir?: string;
  /**
   * Host directory of the session's prepared package set (packagePreparer.ts), bound read-only at
   * `PACKAGES_MOUNT`; commands get `PATH`, `NODE_PATH` and `PYTHONPATH` pointing into it.
   */
  packagesDir?: string;
  /**
   * The session's resource mounts (files, skills, memory stores), checked (resourceMounts.ts);
   * `hostRoot` as bwrap reaches it (a root worker's mount point). Each is bound at its sandbox path,
   * read-only or writable as it says.
   */
  mounts?: SandboxMounts;
  /**
   * More variables for every command: vault `environment_variable` credentials' placeholders (never
   * a secret: egressSecrets.ts) and the trust bundle of the egress proxy's CA (egressCa.ts).
   */
  extraEnv?: Readonly<Record<string, string>>;
  /** The launcher waits on `SANDBOX_FDS.gate` (the host moves it into the memory cgroup first). */
  gated?: boolean;
  /** RLIMIT_DATA per process: the memory bound where no cgroup is writable (sandboxMemory.ts). */
  dataBytes?: number;
  /** HOME of the command: the workspace unless said (a long-lived process gets its own). */
  home?: string;
  /** The command to run inside; argv[0] is resolved on the sandbox's PATH. */
  argv: string[];
  /**
   * What `prlimit … bwrap …` runs under: a root worker's private mounts and drop to the sandbox
   * uid (sandboxMounts.ts). Absent: the process is spawned as the sandbox's uid already.
   */
  launcher?: string[];
}

/** The proxy variables every command of a sandbox with egress gets (both spellings). */
function proxyEnv(): string[] {
  const args: string[] = [];
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) {
    args.push("--setenv", name, EGRESS_PROXY_URL);
  }
  return args;
}

export function bwrapCommand(invocation: BwrapInvocation): { command: string; args: string[] } {
  const { limits } = invocation;
  const prlimit = [
    `--cpu=${limits.cpuSeconds}`,
    `--as=${ADDRESS_SPACE_BYTES}`,
    `--nproc=${limits.processes}`,
    `--fsize=${Math.min(limits.fileSizeBytes, limits.workspaceBytes)}`,
    `--nofile=${limits.openFiles}`,
    ...(invocation.dataBytes === undefined ? [] : [`--data=${invocation.dataBytes}`]),
    "--",
  ];
  const bwrap = [
    // Private user, PID, IPC, UTS, cgroup and network namespaces. No `--share-net`: it would give
    // the command the host's loopback (databases, local services).
    "--unshare-all",
    "--unshare-user",
    // No nested user namespaces: they are where most unprivileged kernel attack surface starts.
    "--disable-userns",
    // If bwrap is killed (timeout), the namespace's init dies with it, and every process in the
    // PID namespace with that init, setsid/nohup/double-forked ones included. bwrap itself dies
    // with its parent, the worker, so a crashed worker leaves no sandbox running.
    "--die-with-parent",
    // A new session: no TIOCSTI into a terminal of the worker.
    "--new-session",
    "--cap-drop",
    "ALL",
    "--uid",
    String(INNER_ID),
    "--gid",
    String(INNER_ID),
    "--hostname",
    "sandbox",
    ...systemBinds(invocation.systemEntries),
    ...etcBinds(),
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    // The IPC namespace's POSIX message queues, visible, so the live sandbox's supervisor can
    // remove what a command left there (it cannot mount anything itself).
    "--mqueue",
    "/dev/mqueue",
    // bwrap's /dev is an unbounded tmpfs the sandbox user owns: /dev/shm gets a bounded tmpfs of
    // its own and the rest of /dev is made read-only below (device nodes stay usable).
    "--size",
    String(limits.tmpBytes),
    "--tmpfs",
    "/dev/shm",
    "--size",
    String(limits.tmpBytes),
    "--tmpfs",
    "/tmp",
    "--bind",
    invocation.workspaceHostPath,
    SANDBOX_WORKSPACE,
    // The egress proxy's socket: read-only, so a command can connect to it but not replace it.
    ...(invocation.egressDir === undefined ? [] : ["--ro-bind", invocation.egressDir, EGRESS_SANDBOX_DIR]),
    // The revision's prepared packages: read-only, shared by every session of that content.
    ...(invocation.packagesDir === undefined ? [] : ["--ro-bind", invocation.packagesDir, PACKAGES_MOUNT]),
    // The session's resources: bwrap creates each mount point on its own root tmpfs (the checked
    // paths never lie inside another mount), then binds the host content there.
    ...resourceBinds(invocation.mounts),
    // bwrap's root is a tmpfs the sandbox user owns: without this, `touch /etc/x` would succeed
    // (landing nowhere, but a command must not believe it can write there). /workspace, /tmp and
    // /dev are mounts of their own and stay writable.
    "--remount-ro",
    "/",
    "--remount-ro",
    "/dev",
    "--chdir",
    SANDBOX_WORKSPACE,
    "--clearenv",
    ...commandPath(invocation.packagesDir),
    "--setenv",
    "HOME",
    invocation.home ?? SANDBOX_WORKSPACE,
    "--setenv",
    "LANG",
    "C.UTF-8",
    // NO_PROXY stays unset (--clearenv): everything goes through the proxy.
    ...(invocation.egressDir === undefined ? [] : proxyEnv()),
    ...Object.entries(invocation.extraEnv ?? {}).flatMap(([name, value]) => ["--setenv", name, value]),
    "--seccomp",
    String(SANDBOX_FDS.seccomp),
    "--",
    ...invocation.argv,
  ];
  return {
    command: invocation.bashPath,
    args: [
      ...launcherBashArgs((invocation.gated ? WAIT_FOR_GATE : "") + CLOSE_INHERITED_FDS, "bash"),
      ...(invocation.launcher ?? []),
      invocation.prlimitPath,
      ...prlimit,
      invocation.bwrapPath,
      ...bwrap,
    ],
  };
}

/** PATH, and with packages NODE_PATH and PYTHONPATH, of every command. */
function resourceBinds(mounts: SandboxMounts | undefined): string[] {
  if (mounts === undefined) return [];
  return mounts.entries.flatMap((mount) => [
    mount.readOnly ? "--ro-bind" : "--bind",
    mountHostPath(mounts.hostRoot, mount.hostPath),
    mount.sandboxPath,
  ]);
}

function commandPath(packagesDir: string | undefined): string[] {
  if (packagesDir === undefined) return ["--setenv", "PATH", SANDBOX_PATH];
  return Object.entries(packagesEnv(PACKAGES_MOUNT, SANDBOX_PATH)).flatMap(([name, value]) => [
    "--setenv",
    name,
    value,
  ]);
}

function systemBinds(entries: SystemEntry[]): string[] {
  const args = ["--ro-bind", "/usr", "/usr"];
  for (const entry of entries) {
    if ("symlinkTo" in entry) args.push("--symlink", entry.symlinkTo, entry.path);
    else args.push("--ro-bind", entry.path, entry.path);
  }
  return args;
}

function etcBinds(): string[] {
  const args = ["--perms", "0755", "--dir", "/etc"];
  for (const name of ETC_ENTRIES) args.push("--ro-bind-try", `/etc/${name}`, `/etc/${name}`);
  args.push("--perms", "0644", "--ro-bind-data", String(SANDBOX_FDS.passwd), "/etc/passwd");
  args.push("--perms", "0644", "--ro-bind-data", String(SANDBOX_FDS.group), "/etc/group");
  return args;
}

/** The sandbox's /etc/passwd: its own user, and `nobody` for ids the namespace does not map. */
export const SANDBOX_PASSWD = [
  `sandbox:x:${INNER_ID}:${INNER_ID}:sandbox:${SANDBOX_WORKSPACE}:/bin/sh`,
  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin",
  "",
].join("\n");

export const SANDBOX_GROUP = [`sandbox:x:${INNER_ID}:`, "nogroup:x:65534:", ""].join("\n");
