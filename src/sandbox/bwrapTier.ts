import type { StdioOptions } from "node:child_process";
import { type FileHandle, mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  bwrapCommand,
  DEFAULT_LIMITS,
  type ResourceLimits,
  SANDBOX_FDS,
  SANDBOX_GROUP,
  SANDBOX_PASSWD,
  SANDBOX_WORKSPACE,
} from "./bwrapArgs.js";
import { type BwrapHost, probeBwrapHost } from "./bwrapHost.js";
import {
  type ExecRequest,
  type ExecResult,
  type Sandbox,
  type SandboxProvider,
  type SandboxSpec,
  SandboxUnavailableError,
} from "./ports.js";
import { execInProcessGroup } from "./processExec.js";
import { HostUidPool, type UidRange } from "./sandboxUsers.js";
import { type HostOwner, prepareWorkspace } from "./sandboxWorkspace.js";
import { seccompProgram } from "./seccompFilter.js";
import { workspaceDirectory } from "./workspaces.js";

export { bwrapAvailable } from "./bwrapHost.js";

export interface BwrapTierOptions {
  /** Host directory holding one workspace per session. */
  workspaceRoot: string;
  /** Host uids handed to sandboxes when the worker runs as root; disjoint per worker on a host. */
  uidRange?: UidRange;
  limits?: Partial<ResourceLimits>;
}

/** Host facts checked once, and the files whose descriptors every exec passes to bwrap. */
interface Prerequisites {
  host: BwrapHost;
  /** Private directory with `passwd`, `group` and `seccomp.bpf`. */
  stateDir: string;
}

const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on every worker host";

/**
 * The `bwrap` tier: every exec runs in a fresh bubblewrap sandbox over the session's workspace
 * (mounted at /workspace), as a host uid of its own, never as root, with the flags and limits in
 * bwrapArgs.ts and the seccomp filter in seccompFilter.ts. Nothing runs between execs; what a
 * command leaves behind is its workspace.
 *
 * A worker running as root (it is here) hands each live sandbox an unused unprivileged host uid:
 * bwrap started as host root maps the sandbox to host uid 0 and could read /etc/shadow. A worker
 * that is not root cannot switch uids and runs bwrap as itself.
 */
export class BwrapTierProvider implements SandboxProvider {
  private readonly pool: HostUidPool;
  private readonly limits: ResourceLimits;
  private readonly live = new Map<string, Promise<BwrapSandbox>>();
  private prerequisites: Promise<Prerequisites> | null = null;

  constructor(private readonly options: BwrapTierOptions) {
    this.pool = new HostUidPool(options.uidRange);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  realize(spec: SandboxSpec): Promise<BwrapSandbox> {
    if (spec.tier !== "bwrap") {
      return Promise.reject(new Error(`the bwrap provider got a "${spec.tier}" spec`));
    }
    // Networking: `unrestricted` and `limited` alike get no network at all for now (a private
    // network namespace with only its own loopback). `--share-net` is not an option: it hands the
    // command the host's loopback. Egress through a host-side allowlist proxy reached from inside
    // the namespace is the follow-up (issue 5); until then no spec can widen this.
    const existing = this.live.get(spec.sessionId);
    if (existing) return existing;
    const started = this.start(spec.sessionId);
    this.live.set(spec.sessionId, started);
    started.catch(() => {
      if (this.live.get(spec.sessionId) === started) this.live.delete(spec.sessionId);
    });
    return started;
  }

  async destroy(sessionId: string): Promise<void> {
    const hostWorkspace = workspaceDirectory(this.options.workspaceRoot, sessionId);
    const entry = this.live.get(sessionId);
    this.live.delete(sessionId);
    if (entry) await this.stop(entry);
    await rm(hostWorkspace, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    const entries = [...this.live.values()];
    this.live.clear();
    await Promise.all(entries.map((entry) => this.stop(entry)));
    const prerequisites = await this.prerequisites?.catch(() => null);
    this.prerequisites = null;
    if (prerequisites) await rm(prerequisites.stateDir, { recursive: true, force: true });
  }

  private async start(sessionId: string): Promise<BwrapSandbox> {
    const prerequisites = await this.checkPrerequisites();
    const hostWorkspace = workspaceDirectory(this.options.workspaceRoot, sessionId);
    const owner = await this.allocateOwner();
    try {
      await prepareWorkspace(hostWorkspace, owner);
    } catch (error) {
      if (owner) this.pool.release(owner.uid);
      throw error;
    }
    return new BwrapSandbox(owner, hostWorkspace, prerequisites, this.limits);
  }

  /** Waits out the sandbox's running commands, then frees its uid. */
  private async stop(entry: Promise<BwrapSandbox>): Promise<void> {
    const sandbox = await entry.catch(() => null);
    if (!sandbox) return;
    await sandbox.shutdown();
    if (sandbox.owner) this.pool.release(sandbox.owner.uid);
  }

  private async allocateOwner(): Promise<HostOwner | null> {
    if (process.getuid?.() !== 0) return null;
    const uid = await this.pool.allocate();
    return { uid, gid: uid };
  }

  private checkPrerequisites(): Promise<Prerequisites> {
    this.prerequisites ??= loadPrerequisites();
    return this.prerequisites;
  }
}

async function loadPrerequisites(): Promise<Prerequisites> {
  if (process.platform !== "linux") {
    throw new SandboxUnavailableError("bwrap", `the bwrap tier needs Linux, not ${process.platform}`);
  }
  let seccomp: Buffer;
  try {
    seccomp = seccompProgram();
  } catch (error) {
    throw new SandboxUnavailableError("bwrap", (error as Error).message);
  }
  const host = await probeBwrapHost();
  if (host === null) {
    throw new SandboxUnavailableError(
      "bwrap",
      `bubblewrap (bwrap), prlimit or bash is missing or does not run on this worker: ${INSTALL_HINT}`,
    );
  }
  const stateDir = await mkdtemp(join(tmpdir(), "awaken-bwrap-"));
  await writeFile(join(stateDir, "passwd"), SANDBOX_PASSWD);
  await writeFile(join(stateDir, "group"), SANDBOX_GROUP);
  await writeFile(join(stateDir, "seccomp.bpf"), seccomp);
  return { host, stateDir };
}

/** One session's sandbox: its workspace, its host uid, and the commands running in it. */
export class BwrapSandbox implements Sandbox {
  readonly tier = "bwrap" as const;
  readonly workspacePath = SANDBOX_WORKSPACE;
  /** Aborted by destroy/close: kills whatever still runs and refuses new execs. */
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    /** The unprivileged host uid the sandbox runs as; null when the worker itself is not root. */
    readonly owner: HostOwner | null,
    /** The workspace as the host sees it. */
    readonly hostWorkspace: string,
    private readonly prerequisites: Prerequisites,
    private readonly limits: ResourceLimits,
  ) {}

  exec(request: ExecRequest): Promise<ExecResult> {
    if (this.stopping.signal.aborted) return Promise.reject(new Error("the sandbox has been destroyed"));
    if (request.argv.length === 0) return Promise.reject(new Error("exec: empty argv"));
    const run = this.run(request);
    this.running.add(run);
    const forget = () => this.running.delete(run);
    run.then(forget, forget);
    return run;
  }

  async shutdown(): Promise<void> {
    this.stopping.abort(new Error("the sandbox has been destroyed"));
    await Promise.allSettled([...this.running]);
  }

  private async run(request: ExecRequest): Promise<ExecResult> {
    // Never as host root, whatever path led here: root's bwrap maps the sandbox onto host uid 0.
    const hostUid = this.owner?.uid ?? process.getuid?.();
    if (hostUid === 0 || hostUid === undefined) throw new Error("refusing to start bwrap as host root");
    const { host } = this.prerequisites;
    const { command, args } = bwrapCommand({
      ...host,
      limits: this.limits,
      workspaceHostPath: this.hostWorkspace,
      argv: request.argv,
    });
    const files = await this.openSandboxFiles();
    try {
      const stdio: StdioOptions = ["pipe", "pipe", "pipe"];
      stdio[SANDBOX_FDS.passwd] = files.passwd.fd;
      stdio[SANDBOX_FDS.group] = files.group.fd;
      stdio[SANDBOX_FDS.seccomp] = files.seccomp.fd;
      return await execInProcessGroup(
        command,
        args,
        { ...request, signal: AbortSignal.any([request.signal, this.stopping.signal]) },
        // An empty environment for prlimit and bwrap; bwrap sets the command's own (--setenv).
        // cwd "/": the worker's directory may not be reachable by the sandbox uid.
        { cwd: "/", env: {}, stdio, ...(this.owner ?? {}) },
      );
    } finally {
      await Promise.all(Object.values(files).map((file) => file.close()));
    }
  }

  /** Fresh descriptors per exec: bwrap reads each to its end. */
  private async openSandboxFiles(): Promise<Record<"passwd" | "group" | "seccomp", FileHandle>> {
    const { stateDir } = this.prerequisites;
    const opened = await Promise.allSettled(
      ["passwd", "group", "seccomp.bpf"].map((name) => open(join(stateDir, name), "r")),
    );
    const handles = opened.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const failure = opened.find((result) => result.status === "rejected");
    if (failure) {
      await Promise.all(handles.map((handle) => handle.close()));
      throw failure.reason;
    }
    const [passwd, group, seccomp] = handles;
    return { passwd: passwd!, group: group!, seccomp: seccomp! };
  }
}
