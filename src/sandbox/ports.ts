/**
 * The provisioning contract between the runtime (which decides, from the frozen activation, which
 * tier a session needs) and the tiers that realize it. A tier never chooses policy: it realizes
 * exactly what it is asked for or refuses with `SandboxUnavailableError`.
 */

export type SandboxTier = "bwrap" | "none";
export const SANDBOX_TIERS: readonly SandboxTier[] = ["bwrap", "none"];

export interface SandboxSpec {
  tier: SandboxTier;
  /** Owner of the workspace: one sandbox (and one workspace) per session, never shared. */
  sessionId: string;
  /** `unrestricted`, or `limited` (no egress but through the allowlist proxy; issue 5). */
  networking:
    | { type: "unrestricted" }
    | {
        type: "limited";
        allowed_hosts: string[];
        /** Also the public package registries (pip, npm, cargo, gem, go); absent means false. */
        allow_package_managers?: boolean;
      };
}

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
}

export interface Sandbox {
  readonly tier: SandboxTier;
  /** The workspace as the commands inside see it (their working directory at start). */
  readonly workspacePath: string;
  exec(request: ExecRequest): Promise<ExecResult>;
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

export class SandboxUnavailableError extends Error {
  constructor(
    readonly tier: SandboxTier,
    message: string,
  ) {
    super(message);
    this.name = "SandboxUnavailableError";
  }
}
