import type { Server } from "node:net";
import type { Readable, Writable } from "node:stream";
import { PlatformError } from "../kernel/errors.js";
import type { PackageResolution } from "../kernel/packageResolution.js";

/**
 * The provisioning contract between the runtime (which decides, from the frozen activation, which
 * tier a session needs) and the tiers that realize it. A tier never chooses policy: it realizes
 * exactly what it is asked for or refuses with `SandboxUnavailableError`.
 */

export type SandboxTier = "bwrap" | "container" | "none";
export const SANDBOX_TIERS: readonly SandboxTier[] = ["bwrap", "container", "none"];

export interface SandboxSpec {
  tier: SandboxTier;
  /** Owner of the workspace: one sandbox (and one workspace) per session, never shared. */
  sessionId: string;
  /**
   * The Awaken workspace (tenant) the session belongs to: a host holds a bounded number of session
   * workspaces per tenant (workspaces.ts). Absent: not counted.
   */
  tenant?: string;
  /**
   * When the session's data subject was last erased (the coordinator's clock): a workspace this
   * host made before it learned of that erasure is deleted before the sandbox starts. Absent: never.
   */
  erasedAt?: number;
  /**
   * The container tier's image reference, frozen in the environment revision (config.sandbox.image)
   * and admitted against the operator's allow-list by the coordinator; the worker checks it again
   * against its own (containerImage.ts). Ignored by the other tiers.
   */
  image?: string;
  /**
   * Set when `image` is the revision's derived image (pinned to the digest its build recorded):
   * the base it was built from, which the operator's allow-list must admit in its place.
   */
  builtFrom?: string;
  /** `unrestricted`, or `limited` (no egress but through the allowlist proxy). */
  networking:
    | { type: "unrestricted" }
    | {
        type: "limited";
        allowed_hosts: string[];
        /** Also the public package registries (pip, npm, cargo, gem, go); absent means false. */
        allow_package_managers?: boolean;
      };
  /**
   * The revision's package lists: prepared once per exact content on the worker's host
   * (packagePreparer.ts) before the sandbox starts, never installed into it. Absent or all empty:
   * no packages.
   */
  packages?: PackageLists;
  /**
   * Where the revision's frozen package resolution lives (the Coordinator, in process or over the
   * worker transport): the preparer installs exactly the recorded one, or resolves and records it
   * first when none is. Absent: packages are installed by range (no frozen resolution).
   */
  packageResolution?: FrozenResolutionSource;
  /**
   * Where `packages` were prepared on this host: filled by the provider that prepared them
   * (TieredSandboxProvider), read by the tiers, which expose it read-only at `PACKAGES_MOUNT`.
   */
  preparedPackages?: PreparedPackages;
  /**
   * The session's pinned `environment_variable` vault credentials, secret-free, and how
   * the egress proxy opens one. The bwrap tier sets each variable to a placeholder and substitutes
   * the secret into requests to allowed hosts; the `none` tier has no proxy and sets nothing.
   * Given again on every realize: the binding (`open`, `onHostRefused`) is the current run's.
   */
  credentials?: SandboxCredentials;
  /**
   * Host content bound into the sandbox at fixed paths (a session's files, skills, memory stores),
   * materialized by the worker under one host directory of the session's, outside its writable
   * workspace. Fixed at bwrap's start; the `none` tier has no mount namespace and refuses them.
   */
  mounts?: SandboxMounts;
  /**
   * The session's repositories, cloned by the worker on its host into the workspace (not a mount)
   * once the sandbox is realized, each only while nothing is at its path yet (sandbox/gitClone.ts).
   * Given on every realize: `token` opens under the realizing run's claim.
   */
  repositories?: SandboxRepository[];
}

/** A repository to clone into the workspace: its token is opened for the clone only. */
export interface SandboxRepository {
  /** The session resource's id, named in a clone error. */
  id: string;
  /** http(s), validated when the resource was created; checked again (and its address) at the clone. */
  url: string;
  checkout: { type: "branch"; name: string } | { type: "commit"; sha: string } | null;
  /** Absolute path inside the sandbox, under `/workspace`. */
  sandboxPath: string;
  /** The token, opened when (and only when) a clone is made; the cloner zeroes it. null: public. */
  token(): Promise<Buffer | null>;
}

/** The session's mounts: every host path lies under `hostRoot` (bound once by a root worker). */
export interface SandboxMounts {
  /** Absolute host directory holding every mount's content. */
  hostRoot: string;
  entries: SandboxMount[];
}

export interface SandboxMount {
  /** Absolute path inside the sandbox (outside /workspace, /proc, /dev, /tmp and the system dirs). */
  sandboxPath: string;
  /** Path relative to `SandboxMounts.hostRoot`: a directory or a regular file. */
  hostPath: string;
  /** Bound read-only (`--ro-bind`); otherwise writable by the sandbox's uid (`--bind`). */
  readOnly: boolean;
}

/** One `environment_variable` credential, as the sandbox sees it: never its value. */
export interface SandboxSecretVariable {
  secretName: string;
  /** The credential's own hosts (`unrestricted`: any host the environment allows). */
  networking: { type: "unrestricted" } | { type: "limited"; allowed_hosts: string[] };
  /** Where the secret may be substituted in a request. */
  injection: { header: boolean; body: boolean };
}

export interface SandboxCredentials {
  variables: SandboxSecretVariable[];
  /**
   * The secret, through admission (audited), for one substitution; the caller zeroes the Buffer
   * once it is substituted. null: not to be used (refused, no pin, or the run lost its claim).
   */
  open(secretName: string): Promise<Buffer | null>;
  /** A request to a host this credential allows was refused by the environment's networking. */
  onHostRefused(secretName: string, host: string, reason: string): void;
  /**
   * At realization: this credential cannot be used in this sandbox at all (secretReach.ts: the
   * `none` tier, or hosts the environment's networking forbids). Said on every realize.
   */
  onUnusable(secretName: string, reason: string): void;
}

/** The six package lists of an environment revision (`config.packages`, without its `type`). */
export interface PackageLists {
  apt?: readonly string[];
  cargo?: readonly string[];
  gem?: readonly string[];
  go?: readonly string[];
  npm?: readonly string[];
  pip?: readonly string[];
}

/** The managers whose packages a worker prepares itself; the others are refused with a clear error. */
export const PREPARABLE_MANAGERS = ["npm", "pip"] as const;

/** A prepared package set on the worker's host: its cache key and directory (`npm/`, `pip/`). */
export interface PreparedPackages {
  /** The set's cache key: the lists' content hash, with the frozen resolution's id when there is one. */
  hash: string;
  dir: string;
  /** The frozen resolution the set was installed from; absent when nothing was frozen. */
  resolutionId?: string;
}

/**
 * One environment revision's frozen package resolution, as the worker reaches it: the recorded one
 * (null when none yet), and the first-writer-wins record, which answers the resolution that is
 * recorded after it (another worker's, when it won).
 */
export interface FrozenResolutionSource {
  recorded(): Promise<PackageResolution | null>;
  record(resolution: PackageResolution): Promise<PackageResolution>;
}

/** Where the bwrap tier binds a prepared set (read-only). */
export const PACKAGES_MOUNT = "/opt/awaken/packages";

/**
 * The variables that make a prepared set usable from commands, for a set visible at `root`
 * (`PACKAGES_MOUNT` inside bwrap, the host directory for the `none` tier). `basePath` is the PATH
 * the tier would give anyway.
 */
export function packagesEnv(root: string, basePath: string): Record<string, string> {
  return {
    PATH: `${root}/npm/node_modules/.bin:${root}/pip/bin:${basePath}`,
    NODE_PATH: `${root}/npm/node_modules`,
    PYTHONPATH: `${root}/pip`,
  };
}

/**
 * How every launcher of ours, and every Hand tool's script, runs bash: with no startup file and
 * nothing taken from its environment but variables. A `bash -c` whose stdin is a socket (Node's
 * stdio pipes are socketpairs) and that has no SHLVL sources /etc/bash.bashrc and `~/.bashrc`
 * (Debian builds bash to, for rshd and sshd); a non-interactive one sources `$BASH_ENV`; any bash
 * defines the functions exported in `BASH_FUNC_*` variables. `--norc --noprofile` stop the first,
 * privileged mode (`-p`) the other two, so nothing runs before our script: a launcher runs as host
 * root, or carries a process's secrets, over a HOME the sandbox may write.
 */
export const NO_STARTUP_FILES = ["--norc", "--noprofile", "-p"] as const;

export interface ExecRequest {
  /** argv[0] is resolved on the sandbox's PATH. */
  argv: string[];
  /** Bytes written to the command's stdin, then closed. */
  stdin?: string;
  /** Wall clock; past it the whole process group is killed and `timedOut` is set. */
  timeoutMs: number;
  /** Combined cap on captured stdout + stderr; the rest is dropped and `truncated` is set. */
  maxOutputBytes: number;
  /** Aborting kills the process group at once (lost claim, shutdown). */
  signal: AbortSignal;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** null when the command was killed by a signal. */
  exitCode: number | null;
  timedOut: boolean;
  truncated: boolean;
  /** A sandbox limit the command ran into (memory, disk quota), said for the model to read. */
  limitHit?: string;
}

/** A long-lived process of the sandbox whose stdin and stdout are the caller's (a stdio MCP server). */
export interface SpawnRequest {
  /** argv[0] is resolved on the sandbox's PATH; never run through a shell. */
  argv: string[];
  /**
   * Variables on top of the tier's own. Values may be secrets: they reach the process's
   * environment only, never a command line, a file or a log.
   */
  env: Readonly<Record<string, string>>;
  /** How much of the end of its stderr is kept (never logged: it may echo its environment). */
  maxStderrBytes: number;
  /** Aborting kills the process (lost claim, shutdown). */
  signal: AbortSignal;
  /**
   * The process reaches the network as the session's commands do: through the sandbox's egress
   * proxy, under the environment's policy, with the credentials' placeholders. Absent: none at
   * all (a stdio MCP server talks to its client only).
   */
  egress?: boolean;
}

export interface SandboxProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Resolves once it has exited (killed, crashed or done), with its exit code (null: a signal). */
  readonly exited: Promise<number | null>;
  /** The last `maxStderrBytes` it wrote on stderr, raw: the caller scrubs before showing any. */
  stderrTail(): string;
  /** Kills it and everything it started; resolves once it is gone. */
  kill(): Promise<void>;
}

export interface Sandbox {
  readonly tier: SandboxTier;
  /** The workspace as the commands inside see it (their working directory at start). */
  readonly workspacePath: string;
  exec(request: ExecRequest): Promise<ExecResult>;
  /**
   * Starts a process that lives until it is killed, the caller's signal aborts or the sandbox is
   * destroyed, with the sandbox's isolation, workspace, uid and limits.
   */
  spawn(request: SpawnRequest): Promise<SandboxProcess>;
  /**
   * Serves `server` on a unix socket named `name` that only this sandbox's processes reach (no
   * network listens), and returns the argv a process spawned with `egress` runs to speak to it on
   * its stdin and stdout. Absent: the tier has no private directory to put one in.
   */
  serveLocal?(name: string, server: Server): Promise<string[]>;
}

export interface SandboxProvider {
  /**
   * The session's sandbox, realized on first use and reused afterwards (same workspace).
   * Throws `SandboxUnavailableError` when the tier cannot be realized on this host.
   */
  realize(spec: SandboxSpec): Promise<Sandbox>;
  /** Deletes the session's workspace (session deleted). */
  destroy(sessionId: string): Promise<void>;
  /** Stops whatever is still running (worker shutdown). */
  close(): Promise<void>;
}

export class SandboxUnavailableError extends PlatformError {
  constructor(
    readonly tier: SandboxTier,
    message: string,
  ) {
    super("sandbox_unavailable", message);
    this.name = "SandboxUnavailableError";
  }
}
