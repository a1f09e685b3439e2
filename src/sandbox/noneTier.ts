import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ExecRequest,
  type ExecResult,
  packagesEnv,
  type Sandbox,
  type SandboxProcess,
  type SandboxProvider,
  type SandboxSpec,
  SandboxUnavailableError,
  type SpawnRequest,
} from "./ports.js";
import { execInProcessGroup } from "./processExec.js";
import { LiveProcess } from "./sandboxProcess.js";
import { unusableSecrets } from "./secretReach.js";
import { workspaceDirectory } from "./workspaces.js";

/** A clean environment: nothing of the worker's own (keys, tokens, database URLs) leaks in. */
const CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin";
/** util-linux `setpriv`, for the parent-death signal. */
const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv"];

/**
 * The `none` tier: a plain subprocess in the session's workspace with a clean environment and a
 * timeout that kills the whole process group. No isolation at all: the command runs as the worker's
 * own user and sees its whole filesystem. For trusted local development only; an environment must
 * ask for it explicitly, and the session reports it.
 */
export class NoneTierProvider implements SandboxProvider {
  private readonly setpriv = SETPRIV_PATHS.find((path) => existsSync(path));
  /**
   * Long-lived processes (stdio MCP servers) per session, killed when it is destroyed or on close,
   * each with its exit and its HOME's removal: a session's destroy waits for its own, never for
   * another session's process, which may run for as long as that session lives.
   */
  private readonly processes = new Map<string, Map<LiveProcess, Promise<void>>>();

  constructor(private readonly workspaceRoot: string) {}

  async realize(spec: SandboxSpec): Promise<Sandbox> {
    // No mount namespace: an absolute mount path would be a host path, shared by every session of
    // this host. Admission refuses such sessions; this is the tier's own refusal behind it.
    if (spec.mounts && spec.mounts.entries.length > 0)
      throw new SandboxUnavailableError(
        "none",
        "the none tier cannot mount session resources or skills (it has no mount namespace)",
      );
    const workspacePath = workspaceDirectory(this.workspaceRoot, spec.sessionId);
    await mkdir(workspacePath, { recursive: true, mode: 0o700 });
    const packagesDir = spec.preparedPackages?.dir;
    // No egress proxy here, so no credential can be substituted: the variables are not set at all
    // (a placeholder would be useless, the secret itself would leak) and each is reported.
    if (spec.credentials) {
      for (const { secretName, reason } of unusableSecrets(spec.credentials.variables, spec))
        spec.credentials.onUnusable(secretName, reason);
    }
    const env = {
      PATH: CLEAN_PATH,
      HOME: workspacePath,
      LANG: "C.UTF-8",
      // The revision's prepared packages, from the host (no isolation on this tier).
      ...(packagesDir === undefined ? {} : packagesEnv(packagesDir, CLEAN_PATH)),
    };
    return {
      tier: "none",
      workspacePath,
      exec: (request: ExecRequest): Promise<ExecResult> => {
        if (request.argv.length === 0) throw new Error("exec: empty argv");
        const [command, ...args] = this.dyingWithWorker(request.argv);
        return execInProcessGroup(command as string, args, request, { cwd: workspacePath, env });
      },
      spawn: async (request: SpawnRequest): Promise<SandboxProcess> => {
        if (request.argv.length === 0) throw new Error("spawn: empty argv");
        const [command, ...args] = this.dyingWithWorker(request.argv);
        // A HOME of its own, made now and removed once it is gone: in the workspace (the commands'
        // HOME) a planted `.bashrc` or `.profile` would run in any shell it starts, secrets in hand.
        const home = await mkdtemp(join(tmpdir(), "awaken-process-home-"));
        // One that cannot be removed stays in the temp dir; it must not fail the process's exit.
        const forgetHome = () => rm(home, { recursive: true, force: true }).catch(() => undefined);
        // The variables go into the process's environment, readable only by the worker's own
        // user, which this tier runs it as anyway.
        let process: LiveProcess;
        try {
          process = await LiveProcess.start(
            command as string,
            args,
            { cwd: workspacePath, env: { ...env, HOME: home, ...request.env } },
            { maxStderrBytes: request.maxStderrBytes, signal: request.signal },
          );
        } catch (error) {
          await forgetHome();
          throw error;
        }
        const live = this.processes.get(spec.sessionId) ?? new Map<LiveProcess, Promise<void>>();
        this.processes.set(spec.sessionId, live);
        // Forgotten once its HOME is gone, so a destroy arriving meanwhile still waits for that.
        const gone = process.exited.then(forgetHome).finally(() => live.delete(process));
        live.set(process, gone);
        return process;
      },
    };
  }

  /**
   * The command dies with the worker (kill -9 included) instead of running on unowned, so a
   * crashed run's side effect stops where the crash left it. Its own children are not covered:
   * only the bwrap tier's PID namespace takes the whole tree down.
   */
  private dyingWithWorker(argv: string[]): string[] {
    return this.setpriv ? [this.setpriv, "--pdeathsig", "SIGKILL", "--", ...argv] : argv;
  }

  async destroy(sessionId: string): Promise<void> {
    await this.killProcesses(sessionId);
    await rm(workspaceDirectory(this.workspaceRoot, sessionId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    // Every exec is bound to its caller's signal; only long-lived processes may still run.
    await Promise.all([...this.processes.keys()].map((sessionId) => this.killProcesses(sessionId)));
  }

  private async killProcesses(sessionId: string): Promise<void> {
    const live = this.processes.get(sessionId);
    this.processes.delete(sessionId);
    if (!live) return;
    await Promise.all([...live.keys()].map((process) => process.kill()));
    await Promise.allSettled([...live.values()]);
  }
}
