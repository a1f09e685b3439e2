import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import type { Server } from "node:net";
import { dirname, join } from "node:path";
import { DEFAULT_LIMITS, type ResourceLimits, SANDBOX_WORKSPACE } from "./bwrapArgs.js";
import { killBwrap } from "./bwrapKill.js";
import { type BwrapLaunch, loadPrerequisites, type Prerequisites, prepareSpawn } from "./bwrapLaunch.js";
import { CA_BUNDLE_NAME, CA_BUNDLE_VARIABLES } from "./egressBundle.js";
import { EGRESS_SANDBOX_DIR, EgressProxy, type EgressProxyOptions } from "./egressProxy.js";
import { relayedPreambleArgv } from "./egressRelay.js";
import { EgressSecrets } from "./egressSecrets.js";
import { serveInPrivateDirectory } from "./localSocket.js";
import type {
  ExecRequest,
  ExecResult,
  Sandbox,
  SandboxCredentials,
  SandboxMounts,
  SandboxProcess,
  SandboxProvider,
  SandboxSpec,
  SpawnRequest,
} from "./ports.js";
import { environmentPreamble, preambleArgv } from "./processEnvironment.js";
import { execInProcessGroup } from "./processExec.js";
import { checkSandboxMounts, prepareWritableMounts, sameMounts } from "./resourceMounts.js";
import { execWithinLimits, type SandboxLimitWatch } from "./sandboxLimits.js";
import {
  CGROUP_PREFIX,
  createSandboxCgroup,
  type MemoryPlan,
  planMemory,
  type SandboxCgroup,
  sweepStaleCgroups,
} from "./sandboxMemory.js";
import { LiveProcess } from "./sandboxProcess.js";
import { HostUidPool, type UidRange, waitForNoProcesses } from "./sandboxUsers.js";
import { type HostOwner, prepareWorkspace } from "./sandboxWorkspace.js";
import { unusableSecrets } from "./secretReach.js";
import { NotAcceptedError, SupervisedBwrap } from "./supervisedBwrap.js";
import { type PooledSandbox, WarmPool } from "./warmPool.js";
import { WorkspaceQuota } from "./workspaceQuota.js";
import { workspaceDirectory } from "./workspaces.js";

export { bwrapAvailable } from "./bwrapHost.js";

export interface BwrapTierOptions {
  /** Host directory holding one workspace per session. */
  workspaceRoot: string;
  /** Host uids handed to sandboxes when the worker runs as root; disjoint per worker on a host. */
  uidRange?: UidRange;
  limits?: Partial<ResourceLimits>;
  /**
   * Sandboxes kept started ahead of sessions (each with a uid of its own and an empty slot for a
   * workspace), so a new session's first command does not wait for bwrap. 0 disables the pool.
   * The pool fills on the first `realize` or on `warm()`. Default 2.
   */
  poolSize?: number;
  /**
   * A session's sandbox left idle this long is stopped; its next command starts it again (same
   * workspace, same uid), as after a crash. 0 keeps it running until the session ends. Default
   * 10 minutes.
   */
  idleTimeoutMs?: number;
  /**
   * The egress proxies' name resolution, address policy and refusal log (egressProxy.ts). Tests
   * only, for `resolve` and `allowAddress`: the defaults (the host's resolver, public addresses
   * only) are the product's.
   */
  egress?: EgressProxyOptions;
  /**
   * How `limits.memoryBytes` is enforced (sandboxMemory.ts): `auto` (default) a cgroup where one
   * is writable, else RLIMIT_DATA per process; `cgroup` refuses to start without one; `rlimit`
   * never uses one. `cgroupParent`: a delegated cgroup to create sandbox cgroups under.
   */
  memory?: { enforcement?: "auto" | "cgroup" | "rlimit"; cgroupParent?: string };
  /** How often a running command's workspace is measured against its quota. Default 1 s. */
  quotaPollMs?: number;
}

const DEFAULT_POOL_SIZE = 2;
const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;
/** Where pooled sandboxes' slots live: under the workspace root (same filesystem, for rename). */
const POOL_DIR = ".pool";
/** When the pool is refilled after a session took from it, if its first command has not come. */
const REFILL_DELAY_MS = 1_000;
/** How long destroy waits for the last processes of a sandbox's uid to go before freeing it. */
const TEARDOWN_WAIT_MS = 2_000;
/**
 * HOME of a long-lived process (a stdio MCP server, holding its secrets): the private tmpfs of its
 * own bwrap, which the session's commands cannot write, unlike the workspace (their HOME), where
 * a planted `.bashrc` or `.profile` would run in any shell the process starts.
 */
const PROCESS_HOME = "/tmp";

/**
 * The `bwrap` tier: one long-lived bubblewrap sandbox per session (bwrap running a small
 * supervisor, supervisor.ts), over the session's workspace (mounted at /workspace), as a host uid
 * of its own, never as root, with the flags and limits in bwrapArgs.ts and the seccomp filter in
 * seccompFilter.ts. Each exec is a request to the supervisor: the command runs in its own process
 * group, and when it ends (exit, timeout or abort) every process it left in the sandbox is killed,
 * /tmp and /dev/shm are emptied: what a command leaves behind is its workspace, as when every
 * command had a sandbox of its own. A sandbox whose supervisor died is restarted by the next
 * exec; an exec arriving while another runs gets a one-shot sandbox of its own (same workspace,
 * same uid).
 *
 * New sessions take a pre-started sandbox from a warm pool when one is ready: its empty slot
 * directory is renamed to become the session's workspace (the bind follows the directory, so the
 * sandbox sees exactly that one directory, never another session's). A session whose workspace
 * already exists (a worker restart) starts a sandbox of its own over it.
 *
 * A worker running as root (it is here) hands each sandbox, pooled ones included, an unused
 * unprivileged host uid, freed only when that sandbox is gone: bwrap started as host root maps
 * the sandbox to host uid 0 and could read /etc/shadow. A worker that is not root cannot switch
 * uids and runs bwrap as itself.
 */
export class BwrapTierProvider implements SandboxProvider {
  private readonly uids: HostUidPool;
  private readonly limits: ResourceLimits;
  private readonly live = new Map<string, Promise<BwrapSandbox>>();
  private readonly pool: WarmPool;
  private readonly idleTimeoutMs: number;
  private prerequisites: Promise<Prerequisites> | null = null;
  private memoryPlan: Promise<MemoryPlan> | null = null;
  private staleCgroupsSwept: Promise<void> | null = null;
  private staleSlotsSwept: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: BwrapTierOptions) {
    this.uids = new HostUidPool(options.uidRange);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    if (!Number.isInteger(poolSize) || poolSize < 0) throw new Error(`not a pool size: ${poolSize}`);
    this.pool = new WarmPool(
      poolSize,
      () => this.startPooled(),
      (entry) => this.discardPooled(entry),
    );
  }

  realize(spec: SandboxSpec): Promise<BwrapSandbox> {
    if (spec.tier !== "bwrap") {
      return Promise.reject(new Error(`the bwrap provider got a "${spec.tier}" spec`));
    }
    if (this.closed) return Promise.reject(new Error("the bwrap provider is closed"));
    try {
      if (spec.mounts) checkSandboxMounts("bwrap", spec.mounts);
    } catch (error) {
      return Promise.reject(error);
    }
    // Networking: every sandbox keeps a private network namespace (only its own loopback; never
    // `--share-net`, which hands the command the host's loopback). Its only egress is its own host
    // proxy (egressProxy.ts), reached through the supervisor's relay, whose policy is the SandboxSpec's:
    // `limited` lets its allowed_hosts through, `unrestricted` any host; both refuse non-public
    // addresses. A pooled sandbox's proxy lets nothing through until a session takes it and sets
    // its policy, so every pooled sandbox fits every spec.
    // Credentials this sandbox can never use (hosts the environment forbids) are said on every
    // realize; the run reports each once per session.
    if (spec.credentials) {
      for (const { secretName, reason } of unusableSecrets(spec.credentials.variables, spec))
        spec.credentials.onUnusable(secretName, reason);
    }
    const existing = this.live.get(spec.sessionId);
    // The credentials' binding (how a secret is opened, under which claim) is the realizing run's.
    if (existing)
      return existing.then((sandbox) => sandbox.bindCredentials(spec.credentials).useMounts(spec.mounts));
    const started = this.start(spec);
    this.live.set(spec.sessionId, started);
    started.catch(() => {
      if (this.live.get(spec.sessionId) === started) this.live.delete(spec.sessionId);
    });
    return started;
  }

  /**
   * Fills the warm pool now (rather than on the first `realize`) and resolves once it is ready, or
   * rejects with `SandboxUnavailableError` when this host cannot run the tier.
   */
  async warm(): Promise<void> {
    await this.checkPrerequisites();
    await this.sweepStaleSlots();
    this.pool.fill();
    await this.pool.settled();
  }

  /** Pooled sandboxes ready right now (for benches and tests). */
  get pooled(): number {
    return this.pool.readyCount;
  }

  async destroy(sessionId: string): Promise<void> {
    const hostWorkspace = workspaceDirectory(this.options.workspaceRoot, sessionId);
    const entry = this.live.get(sessionId);
    this.live.delete(sessionId);
    if (entry) await this.stop(entry);
    await rm(hostWorkspace, { recursive: true, force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.live.values()];
    this.live.clear();
    await Promise.all([this.pool.close(), ...entries.map((entry) => this.stop(entry))]);
    await this.uids.close();
    const prerequisites = await this.prerequisites?.catch(() => null);
    this.prerequisites = null;
    if (prerequisites) await rm(prerequisites.stateDir, { recursive: true, force: true });
  }

  private async start(spec: SandboxSpec): Promise<BwrapSandbox> {
    const prerequisites = await this.checkPrerequisites();
    const hostWorkspace = workspaceDirectory(this.options.workspaceRoot, spec.sessionId);
    // The pool is refilled once this session's first command is done (or after a while): starting
    // a sandbox meanwhile would compete with that command for the CPU and the event loop.
    let refilled = false;
    const refill = () => {
      if (refilled) return;
      refilled = true;
      clearTimeout(fallback);
      void this.sweepStaleSlots().then(() => this.pool.fill());
    };
    const fallback = setTimeout(refill, REFILL_DELAY_MS);
    fallback.unref();
    const options = { idleTimeoutMs: this.idleTimeoutMs, onFirstExec: refill };
    // A pooled sandbox was started without any package set bound (bind mounts are fixed at bwrap's
    // start): a session with packages takes it with its live process stopped, and the next bwrap
    // started for it (its first command's, a spawned process's such as a harness) binds them.
    const packagesDir = spec.preparedPackages?.dir;
    // A session with `environment_variable` credentials starts one of its own: their placeholders
    // are in the live sandbox's environment, fixed at bwrap's start, and set up before it.
    const secrets =
      spec.credentials && spec.credentials.variables.length > 0
        ? await EgressSecrets.create(spec.credentials.variables)
        : null;
    const withSecrets = secrets !== null && secrets.table.length > 0 ? secrets : null;
    // And a session with resource mounts: binds are fixed at bwrap's start.
    const pooled =
      withSecrets === null && spec.mounts === undefined ? await this.claimPooled(hostWorkspace) : null;
    if (pooled) {
      pooled.egress.setPolicy(spec.networking);
      // Its live process has no package bind: with packages it is stopped (off the session's path)
      // and started again with the binds on first use.
      const live = packagesDir === undefined ? pooled.process : null;
      if (!live) void pooled.process.kill().catch(() => undefined);
      return new BwrapSandbox(
        pooled.owner,
        hostWorkspace,
        {
          ...this.launchBase(prerequisites),
          egressDir: pooled.egress.directory,
          ...(packagesDir === undefined ? {} : { packagesDir }),
          ...(pooled.cgroup ? { cgroup: pooled.cgroup } : {}),
        },
        { ...options, live, egress: pooled.egress, limits: this.watch(hostWorkspace, pooled.cgroup) },
      );
    }
    const owner = await this.allocateOwner();
    let egress: EgressProxy | null = null;
    let cgroup: SandboxCgroup | undefined;
    try {
      await prepareWorkspace(hostWorkspace, owner);
      if (spec.mounts) await prepareWritableMounts(spec.mounts, owner);
      egress = await EgressProxy.start(owner, this.options.egress);
      egress.setPolicy(spec.networking);
      const extraEnv = withSecrets ? await this.secretEnvironment(egress, withSecrets) : undefined;
      cgroup = await this.newCgroup();
      const base = {
        ...this.launchBase(prerequisites),
        egressDir: egress.directory,
        ...(packagesDir === undefined ? {} : { packagesDir }),
        ...(spec.mounts === undefined ? {} : { mounts: spec.mounts }),
        ...(extraEnv === undefined ? {} : { extraEnv }),
        ...(cgroup ? { cgroup } : {}),
      };
      const live = await SupervisedBwrap.start({ ...base, owner, workspaceHostPath: hostWorkspace });
      const sandbox = new BwrapSandbox(owner, hostWorkspace, base, {
        ...options,
        live,
        egress,
        limits: this.watch(hostWorkspace, cgroup),
        ...(withSecrets ? { secrets: withSecrets } : {}),
      });
      return sandbox.bindCredentials(spec.credentials);
    } catch (error) {
      await egress?.close();
      await cgroup?.remove().catch(() => {});
      if (owner) this.uids.release(owner.uid);
      throw error;
    }
  }

  /**
   * Hands the sandbox's substitution table to its proxy and writes the trust bundle (system CAs +
   * the sandbox's CA) into the proxy's directory (bound read-only inside); returns the variables
   * the commands get: each credential's name set to its placeholder, and the bundle for the usual
   * TLS clients (OpenSSL/curl, Node, Python requests, git).
   */
  private async secretEnvironment(
    egress: EgressProxy,
    secrets: EgressSecrets,
  ): Promise<Record<string, string>> {
    egress.useSecrets(secrets);
    await secrets.ca.writeBundle(egress.directory);
    const bundle = `${EGRESS_SANDBOX_DIR}/${CA_BUNDLE_NAME}`;
    return {
      ...secrets.environment(),
      ...Object.fromEntries(CA_BUNDLE_VARIABLES.map((name) => [name, bundle])),
    };
  }

  /**
   * A pooled sandbox whose slot is now `hostWorkspace`, or null. rename(2) moves the slot only onto
   * a path that does not exist or is an empty directory: an existing workspace is never replaced,
   * and the sandbox goes back to the pool untouched.
   */
  private async claimPooled(hostWorkspace: string): Promise<PooledSandbox | null> {
    const entry = this.pool.take();
    if (!entry) return null;
    try {
      await mkdir(dirname(hostWorkspace), { recursive: true, mode: 0o700 });
      await rename(entry.slot, hostWorkspace);
      return entry;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") this.pool.giveBack(entry);
      else await this.discardPooled(entry);
      return null;
    }
  }

  private async startPooled(): Promise<PooledSandbox> {
    const prerequisites = await this.checkPrerequisites();
    const owner = await this.allocateOwner();
    const slot = join(this.options.workspaceRoot, POOL_DIR, `${process.pid}-${randomUUID()}`);
    let egress: EgressProxy | null = null;
    let cgroup: SandboxCgroup | undefined;
    try {
      await prepareWorkspace(slot, owner);
      // No policy yet: nothing gets out until a session takes this sandbox.
      egress = await EgressProxy.start(owner, this.options.egress);
      cgroup = await this.newCgroup();
      const sandbox = await SupervisedBwrap.start({
        ...this.launchBase(prerequisites),
        owner,
        workspaceHostPath: slot,
        egressDir: egress.directory,
        ...(cgroup ? { cgroup } : {}),
      });
      return { owner, slot, process: sandbox, egress, ...(cgroup ? { cgroup } : {}) };
    } catch (error) {
      await egress?.close();
      await cgroup?.remove().catch(() => {});
      if (owner) this.uids.release(owner.uid);
      await rm(slot, { recursive: true, force: true });
      throw error;
    }
  }

  private async discardPooled(entry: PooledSandbox): Promise<void> {
    await entry.process.kill();
    await entry.egress.close();
    if (entry.owner) await this.releaseWhenGone(entry.owner.uid);
    await entry.cgroup?.remove().catch(() => {});
    await rm(entry.slot, { recursive: true, force: true });
  }

  /** Slots a crashed earlier worker process left (never used, so empty): removed once. */
  private sweepStaleSlots(): Promise<void> {
    this.staleSlotsSwept ??= (async () => {
      const dir = join(this.options.workspaceRoot, POOL_DIR);
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        const pid = Number(name.split("-")[0]);
        if (pid === process.pid || (Number.isInteger(pid) && processExists(pid))) continue;
        await rm(join(dir, name), { recursive: true, force: true });
      }
    })();
    return this.staleSlotsSwept;
  }

  /** Kills the sandbox and what runs in it, then frees its uid. */
  private async stop(entry: Promise<BwrapSandbox>): Promise<void> {
    const sandbox = await entry.catch(() => null);
    if (!sandbox) return;
    await sandbox.shutdown();
    if (sandbox.owner) await this.releaseWhenGone(sandbox.owner.uid);
    await sandbox.cgroup?.remove().catch(() => {});
  }

  /**
   * Frees a killed sandbox's uid once nothing runs as it any more. One with a process that would
   * not die in time (stuck in the kernel) stays reserved for the life of this worker: a new
   * sandbox must never share a uid, and so a process budget, with anything.
   */
  private async releaseWhenGone(uid: number): Promise<void> {
    if (await waitForNoProcesses(uid, TEARDOWN_WAIT_MS)) this.uids.release(uid);
  }

  private launchBase(prerequisites: Prerequisites): Pick<BwrapLaunch, "prerequisites" | "limits"> {
    return { prerequisites, limits: this.limits };
  }

  private async allocateOwner(): Promise<HostOwner | null> {
    if (process.getuid?.() !== 0) return null;
    const uid = await this.uids.allocate();
    return { uid, gid: uid };
  }

  /** The host's way to bound memory is part of the prerequisites: neither is a start-up error. */
  private checkPrerequisites(): Promise<Prerequisites> {
    this.memoryPlan ??= planMemory({
      required: this.options.memory?.enforcement ?? "auto",
      ...(this.options.memory?.cgroupParent ? { cgroupParent: this.options.memory.cgroupParent } : {}),
    });
    this.prerequisites ??= this.memoryPlan.then(() => loadPrerequisites());
    return this.prerequisites;
  }

  /** A memory cgroup for one new sandbox; none where memory is bounded per process. */
  private async newCgroup(): Promise<SandboxCgroup | undefined> {
    const plan = await this.memoryPlan;
    if (!plan || plan.enforcement === "rlimit") return undefined;
    this.staleCgroupsSwept ??= sweepStaleCgroups(plan);
    await this.staleCgroupsSwept;
    return createSandboxCgroup(plan, `${CGROUP_PREFIX}${process.pid}-${randomUUID()}`, {
      memoryBytes: this.limits.memoryBytes,
      processes: this.limits.processes,
    });
  }

  private watch(hostWorkspace: string, cgroup: SandboxCgroup | undefined): SandboxLimitWatch {
    return {
      cgroup: cgroup ?? null,
      memoryBytes: this.limits.memoryBytes,
      quota: new WorkspaceQuota(
        hostWorkspace,
        { bytes: this.limits.workspaceBytes, inodes: this.limits.workspaceInodes },
        this.options.quotaPollMs,
      ),
    };
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** One session's sandbox: its workspace, its host uid, and the live bwrap its commands run in. */
export class BwrapSandbox implements Sandbox {
  readonly tier = "bwrap" as const;
  readonly workspacePath = SANDBOX_WORKSPACE;
  /** Aborted by destroy/close: kills whatever still runs and refuses new execs. */
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  /** Long-lived processes (stdio MCP servers) started in this sandbox; killed with it. */
  private readonly processes = new Set<LiveProcess>();
  private live: SupervisedBwrap | null;
  /** The live sandbox is running a command (or being started for one). */
  private liveBusy = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly idleTimeoutMs: number;
  private onFirstExec: (() => void) | undefined;
  private readonly egress: EgressProxy | null;
  private readonly secrets: EgressSecrets | null;
  private readonly limitWatch: SandboxLimitWatch;

  constructor(
    /** The unprivileged host uid the sandbox runs as; null when the worker itself is not root. */
    readonly owner: HostOwner | null,
    /** The workspace as the host sees it. */
    readonly hostWorkspace: string,
    private readonly base: Pick<
      BwrapLaunch,
      "prerequisites" | "limits" | "egressDir" | "packagesDir" | "extraEnv" | "cgroup" | "mounts"
    >,
    options: {
      live: SupervisedBwrap | null;
      idleTimeoutMs: number;
      onFirstExec?: () => void;
      /** The sandbox's egress proxy; closed with it. */
      egress?: EgressProxy;
      /** Its secret substitution table, when the session pinned `environment_variable` credentials. */
      secrets?: EgressSecrets;
      /** Its memory limit and workspace quota, watched per exec (sandboxLimits.ts). */
      limits: SandboxLimitWatch;
    },
  ) {
    this.limitWatch = options.limits;
    this.live = options.live;
    this.egress = options.egress ?? null;
    this.secrets = options.secrets ?? null;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.onFirstExec = options.onFirstExec;
    this.armIdleTimer();
  }

  /** Makes `credentials` (the realizing run's) the binding its proxy opens secrets through. */
  bindCredentials(credentials: SandboxCredentials | undefined): this {
    if (credentials && this.secrets) this.secrets.bind(credentials);
    return this;
  }

  /**
   * Makes `mounts` (the realizing run's) the ones the sandbox binds. The same set changes nothing
   * (the host content under them is refreshed in place); another set (a resource added since) is
   * bound from the next bwrap start on, and the idle live sandbox is stopped so that is now.
   */
  async useMounts(mounts: SandboxMounts | undefined): Promise<this> {
    if (mounts === undefined || sameMounts(this.base.mounts, mounts)) return this;
    await prepareWritableMounts(mounts, this.owner);
    this.base.mounts = mounts;
    if (!this.liveBusy && this.live) {
      const live = this.live;
      this.live = null;
      await live.kill();
    }
    return this;
  }

  /** The sandbox's memory cgroup, removed once it is gone; none where memory is bounded per process. */
  get cgroup(): SandboxCgroup | undefined {
    return this.base.cgroup;
  }

  /** The live bwrap process, if one runs (tests look inside). */
  get process(): SupervisedBwrap | null {
    return this.live;
  }

  exec(request: ExecRequest): Promise<ExecResult> {
    if (this.stopping.signal.aborted) return Promise.reject(new Error("the sandbox has been destroyed"));
    if (request.argv.length === 0) return Promise.reject(new Error("exec: empty argv"));
    const guarded = { ...request, signal: AbortSignal.any([request.signal, this.stopping.signal]) };
    const run = execWithinLimits(this.limitWatch, guarded, (limited) =>
      this.liveBusy ? this.runOneShot(limited) : this.runLive(limited),
    );
    this.running.add(run);
    const forget = () => this.running.delete(run);
    run.then(forget, forget);
    return run;
  }

  /**
   * A process of its own in a bwrap of its own over the same workspace, as the same uid, with the
   * same flags, limits, memory cgroup and packages as the session's commands (as a one-shot exec
   * gets), its variables passed on stdin (processEnvironment.ts), never on bwrap's command line.
   * Without `egress` its network namespace holds only its own loopback; with it, a relay of its own
   * (egressRelay.ts) takes the supervisor's place in front of the same proxy. Its HOME is its own.
   */
  async spawn(request: SpawnRequest): Promise<SandboxProcess> {
    if (this.stopping.signal.aborted) throw new Error("the sandbox has been destroyed");
    if (request.argv.length === 0) throw new Error("spawn: empty argv");
    if (request.argv.some((arg) => arg.includes("\0"))) throw new Error("spawn: an argv entry contains NUL");
    const { egressDir, extraEnv, ...isolated } = this.base;
    const host = isolated.prerequisites.host;
    // With egress, the same proxy directory and placeholders as commands, and a relay of its own.
    const relayed = request.egress === true && egressDir !== undefined;
    const prepared = await prepareSpawn(
      {
        ...isolated,
        ...(relayed ? { egressDir, ...(extraEnv ? { extraEnv } : {}) } : {}),
        owner: this.owner,
        workspaceHostPath: this.hostWorkspace,
        home: PROCESS_HOME,
      },
      relayed ? relayedPreambleArgv(host, request.argv) : preambleArgv(host.bashPath, request.argv),
    );
    let process: LiveProcess;
    try {
      process = await LiveProcess.start(prepared.command, prepared.args, prepared.options, {
        maxStderrBytes: request.maxStderrBytes,
        signal: AbortSignal.any([request.signal, this.stopping.signal]),
        preamble: environmentPreamble(request.env),
        started: prepared.started,
        killTree: (child, exited) =>
          child.pid === undefined ? Promise.resolve() : killBwrap(child.pid, exited),
      });
    } finally {
      await prepared.close();
    }
    this.processes.add(process);
    void process.exited.then(() => this.processes.delete(process));
    return process;
  }

  /** In the egress proxy's private directory, which a process spawned with egress has bound. */
  async serveLocal(name: string, server: Server): Promise<string[]> {
    const directory = this.base.egressDir;
    if (directory === undefined) throw new Error("this sandbox has no private directory");
    return serveInPrivateDirectory(
      server,
      directory,
      name,
      this.owner,
      this.base.prerequisites.host.perlPath,
    );
  }

  async shutdown(): Promise<void> {
    this.stopping.abort(new Error("the sandbox has been destroyed"));
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const live = this.live;
    this.live = null;
    await Promise.all([
      live?.kill(),
      ...[...this.processes].map((process) => process.kill()),
      Promise.allSettled([...this.running]),
    ]);
    await this.egress?.close();
  }

  private async runLive(request: ExecRequest): Promise<ExecResult> {
    this.liveBusy = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    try {
      for (let attempt = 0; ; attempt += 1) {
        const live = await this.ensureLive();
        try {
          return await live.exec(request);
        } catch (error) {
          // The sandbox died before the command reached it: it never ran, so run it on a new one.
          if (!(error instanceof NotAcceptedError) || attempt > 0 || request.signal.aborted) throw error;
        }
      }
    } finally {
      this.liveBusy = false;
      this.armIdleTimer();
      const onFirstExec = this.onFirstExec;
      this.onFirstExec = undefined;
      onFirstExec?.();
    }
  }

  /** The live sandbox, started again (same workspace, same uid) when it is not running. */
  private async ensureLive(): Promise<SupervisedBwrap> {
    if (this.live?.alive) return this.live;
    const live = await SupervisedBwrap.start({
      ...this.base,
      owner: this.owner,
      workspaceHostPath: this.hostWorkspace,
    });
    if (this.stopping.signal.aborted) {
      await live.kill();
      throw new Error("the sandbox has been destroyed");
    }
    this.live = live;
    return live;
  }

  /**
   * A command arriving while another runs gets a sandbox of its own for its lifetime, as every
   * command did before the live sandbox: the live one's sweep must not kill what it started.
   * With egress it is a supervised sandbox of its own (its supervisor is the relay to the proxy,
   * on the one-shot's own loopback), killed once the command is done.
   */
  private async runOneShot(request: ExecRequest): Promise<ExecResult> {
    if (this.base.egressDir !== undefined) {
      const oneShot = await SupervisedBwrap.start({
        ...this.base,
        owner: this.owner,
        workspaceHostPath: this.hostWorkspace,
      });
      try {
        return await oneShot.exec(request);
      } finally {
        await oneShot.kill();
      }
    }
    const prepared = await prepareSpawn(
      { ...this.base, owner: this.owner, workspaceHostPath: this.hostWorkspace },
      request.argv,
    );
    try {
      return await execInProcessGroup(
        prepared.command,
        prepared.args,
        request,
        prepared.options,
        prepared.started,
      );
    } finally {
      await prepared.close();
    }
  }

  private armIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.idleTimeoutMs <= 0 || this.stopping.signal.aborted) return;
    this.idleTimer = setTimeout(() => {
      if (this.liveBusy || !this.live) return;
      const live = this.live;
      this.live = null;
      void live.kill();
    }, this.idleTimeoutMs);
    this.idleTimer.unref();
  }
}
