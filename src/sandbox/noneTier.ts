import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import {
  type ExecRequest,
  type ExecResult,
  packagesEnv,
  type Sandbox,
  type SandboxProvider,
  type SandboxSpec,
} from "./ports.js";
import { execInProcessGroup } from "./processExec.js";
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

  constructor(private readonly workspaceRoot: string) {}

  async realize(spec: SandboxSpec): Promise<Sandbox> {
    const workspacePath = workspaceDirectory(this.workspaceRoot, spec.sessionId);
    await mkdir(workspacePath, { recursive: true, mode: 0o700 });
    const packagesDir = spec.preparedPackages?.dir;
    // No egress proxy here, so no credential can be substituted: the variables are not set at all
    // (a placeholder would be useless, the secret itself would leak) and each is reported.
    if (spec.credentials) {
      for (const { secretName, reason } of unusableSecrets(spec.credentials.variables, spec))
        spec.credentials.onUnusable(secretName, reason);
    }
    return {
      tier: "none",
      workspacePath,
      exec: (request: ExecRequest): Promise<ExecResult> => {
        if (request.argv.length === 0) throw new Error("exec: empty argv");
        // The command dies with the worker (kill -9 included) instead of running on unowned, so
        // a crashed run's side effect stops where the crash left it. Its own children are not
        // covered: only the bwrap tier's PID namespace takes the whole tree down.
        const [command, ...args] = this.setpriv
          ? [this.setpriv, "--pdeathsig", "SIGKILL", "--", ...request.argv]
          : request.argv;
        return execInProcessGroup(command as string, args, request, {
          cwd: workspacePath,
          env: {
            PATH: CLEAN_PATH,
            HOME: workspacePath,
            LANG: "C.UTF-8",
            // The revision's prepared packages, from the host (no isolation on this tier).
            ...(packagesDir === undefined ? {} : packagesEnv(packagesDir, CLEAN_PATH)),
          },
        });
      },
    };
  }

  async destroy(sessionId: string): Promise<void> {
    await rm(workspaceDirectory(this.workspaceRoot, sessionId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    // Every exec is bound to its caller's signal; nothing lives on here.
  }
}
