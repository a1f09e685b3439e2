import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import type { Server } from "node:net";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { builtImageAdmissionProblem, imageAdmissionProblem } from "../kernel/containerImages.js";
import { DEFAULT_LIMITS, type ResourceLimits } from "./bwrapArgs.js";
import type { PreparedSpawn } from "./bwrapLaunch.js";
import {
  CONTAINER_LABEL,
  CONTAINER_WORKSPACE,
  type ContainerInvocation,
  containerCommand,
} from "./containerArgs.js";
import { CONTAINER_INSTALL_HINT, type ContainerHost, probeContainerHost } from "./containerHost.js";
import { containerCgroup, containerOomFile, readOomKills } from "./containerMemory.js";
import { writeContainerSeccompProfile } from "./containerSeccomp.js";
import { type ContainerStorage, podmanStorageArgs } from "./containerStorage.js";
import { CA_BUNDLE_NAME, CA_BUNDLE_VARIABLES } from "./egressBundle.js";
import {
  EGRESS_SANDBOX_DIR,
  EGRESS_SOCKET_NAME,
  EgressProxy,
  type EgressProxyOptions,
} from "./egressProxy.js";
import { relayedPreambleArgv } from "./egressRelay.js";
import { EgressSecrets } from "./egressSecrets.js";
import { serveInPrivateDirectory } from "./localSocket.js";
import {
  type ExecRequest,
  type ExecResult,
  type Sandbox,
  type SandboxCredentials,
  type SandboxProcess,
  type SandboxProvider,
  type SandboxSpec,
  SandboxUnavailableError,
  type SpawnRequest,
} from "./ports.js";
import { environmentPreamble, preambleArgv } from "./processEnvironment.js";
import { checkSandboxMounts, prepareWritableMounts } from "./resourceMounts.js";
import { execWithinLimits, type SandboxLimitWatch } from "./sandboxLimits.js";
import { LiveProcess } from "./sandboxProcess.js";
import { HostUidPool, type UidRange, waitForNoProcesses } from "./sandboxUsers.js";
import { type HostOwner, prepareWorkspace } from "./sandboxWorkspace.js";
import { unusableSecrets } from "./secretReach.js";
import { NotAcceptedError, SupervisedBwrap, type SupervisedTree } from "./supervisedBwrap.js";
import { supervisorArgv } from "./supervisor.js";
import { type PooledSandbox, WarmPool } from "./warmPool.js";
import { WorkspaceQuota } from "./workspaceQuota.js";
import { workspaceDirectory } from "./workspaces.js";

const run = promisify(execFile);

export interface ContainerTierOptions {
  /** Host directory holding one workspace per session (the same root as the bwrap tier's). */
  workspaceRoot: string;
  /** The operator's image allow-list (kernel/containerImages.ts): checked again on this worker. */
  allowedImages: readonly string[];
  limits?: Partial<ResourceLimits>;
  uidRange?: UidRange;
  /** Tests only: the egress proxies' resolver and address policy (as the bwrap tier's). */
  egress?: EgressProxyOptions;
  /** `never` (default): the image must be in the local store; `missing`: pulled once (by digest). */
  pull?: "never" | "missing";
  /** Verify the registry's TLS when pulling. Default true. */
  tlsVerify?: boolean;
  /** Tests only: another podman (or a missing one) than the host's. */
  host?: { podmanPath?: string; runcPath?: string };
  /**
   * This host's own image store (containerStorage.ts, opened at start-up): every podman command
   * (sessions, the warm pool, leftover sweeps, removals, inspects) names it. Absent: podman's default.
   */
  storage?: ContainerStorage;
  /**
   * Containers kept started ahead of sessions, per image (a pool per image a session has asked
   * for on this worker, or `warm` was given), each with a uid of its own and an empty workspace
   * slot. 0 disables the pool. Default 2.
   */
  poolSize?: number;
  /** A session's idle container is stopped after this long (restarted by its next command). Default 10 min. */
  idleTimeoutMs?: number;
  quotaPollMs?: number;
}

/** The variables and environment podman itself runs with (never the worker's, which holds keys). */
const PODMAN_ENV = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOME: "/root" };
const DEFAULT_IDLE_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_POOL_SIZE = 2;
/** HOME of a long-lived process: its container's private /tmp, which the session's commands cannot write. */
const PROCESS_HOME = "/tmp";
/** Pooled containers' slots, under the workspace root (same filesystem, for rename). */
const POOL_DIR = ".container-pool";
const TEARDOWN_WAIT_MS = 2_000;
/** How long `podman rm --force` may take before the client's process group is killed anyway. */
const REMOVE_TIMEOUT_MS = 15_000;
/** A first pull of a large image on a fresh host: far longer than a sandbox's start may take. */
const PULL_TIMEOUT_MS = 10 * 60_000;

type Launch = Omit<ContainerInvocation, "name" | "argv">;

/**
 * The `container` tier: one long-lived podman container (runc) per session, running the same
 * supervisor as the bwrap tier (supervisor.ts) as its command, over the session's workspace bound
 * at /workspace, as an unprivileged host uid of its own (HostUidPool, shared host-wide with the
 * bwrap tier), with the flags and limits of containerArgs.ts. Egress is the same host proxy
 * (egressProxy.ts) the bwrap tier uses: its socket is bound read-only in the container, whose only
 * network is its own loopback, where the supervisor relays 127.0.0.1:3128 to it. Secret
 * substitution, the workspace quota, session resource mounts and prepared packages are the bwrap
 * tier's too. The image is the revision's `config.sandbox.image`, admitted by the coordinator and
 * again here against this worker's allow-list.
 */
export class ContainerTierProvider implements SandboxProvider {
  private readonly uids: HostUidPool;
  private readonly limits: ResourceLimits;
  private readonly live = new Map<string, Promise<ContainerSandbox>>();
  private host: Promise<ContainerHost & { seccomp: { dir: string; path: string } }> | null = null;
  private staleSwept: Promise<void> | null = null;
  private staleSlotsSwept: Promise<void> | null = null;
  private readonly pools = new Map<string, WarmPool>();
  /** `pull: "missing"`: each image's pull (one at a time per image), kept once it succeeded. */
  private readonly pulls = new Map<string, Promise<void>>();
  /** Aborted on close: a pull in flight is stopped, not left running past this provider. */
  private readonly closing = new AbortController();
  private readonly poolSize: number;
  private closed = false;

  constructor(private readonly options: ContainerTierOptions) {
    this.uids = new HostUidPool(options.uidRange);
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
    if (!Number.isInteger(this.poolSize) || this.poolSize < 0)
      throw new Error(`not a pool size: ${this.poolSize}`);
  }

  /**
   * Fills `image`'s warm pool now and resolves once it is ready, or rejects with
   * `SandboxUnavailableError` when this host cannot run the tier or the image is not allowed.
   */
  async warm(image: string): Promise<void> {
    const problem = imageAdmissionProblem(image, this.options.allowedImages);
    if (problem !== null) throw new SandboxUnavailableError("container", `on this worker: ${problem}`);
    await this.checkHost();
    await this.sweepStaleSlots();
    const pool = this.poolOf(image);
    pool.fill();
    await pool.settled();
  }

  /** Pooled containers of `image` ready right now (for tests and benches). */
  pooled(image: string): number {
    return this.pools.get(image)?.readyCount ?? 0;
  }

  private poolOf(image: string): WarmPool {
    let pool = this.pools.get(image);
    if (!pool) {
      pool = new WarmPool(
        this.poolSize,
        () => this.startPooled(image),
        (entry) => this.discardPooled(entry),
      );
      this.pools.set(image, pool);
    }
    return pool;
  }

  realize(spec: SandboxSpec): Promise<ContainerSandbox> {
    if (spec.tier !== "container")
      return Promise.reject(new Error(`the container provider got a "${spec.tier}" spec`));
    if (this.closed) return Promise.reject(new Error("the container provider is closed"));
    const problem =
      spec.builtFrom !== undefined && spec.image !== undefined
        ? builtImageAdmissionProblem(spec.image, spec.builtFrom, this.options.allowedImages)
        : imageAdmissionProblem(spec.image, this.options.allowedImages);
    if (problem !== null)
      return Promise.reject(new SandboxUnavailableError("container", `on this worker: ${problem}`));
    try {
      if (spec.mounts) checkSandboxMounts("container", spec.mounts);
    } catch (error) {
      return Promise.reject(error);
    }
    if (spec.credentials) {
      for (const { secretName, reason } of unusableSecrets(spec.credentials.variables, spec))
        spec.credentials.onUnusable(secretName, reason);
    }
    const existing = this.live.get(spec.sessionId);
    if (existing) return existing.then((sandbox) => sandbox.bindCredentials(spec.credentials));
    const started = this.start(spec);
    this.live.set(spec.sessionId, started);
    started.catch(() => {
      if (this.live.get(spec.sessionId) === started) this.live.delete(spec.sessionId);
    });
    return started;
  }

  async destroy(sessionId: string): Promise<void> {
    const entry = this.live.get(sessionId);
    this.live.delete(sessionId);
    if (entry) await this.stop(entry);
    await rm(workspaceDirectory(this.options.workspaceRoot, sessionId), { recursive: true, force: true });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    const entries = [...this.live.values()];
    this.live.clear();
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all([...pools.map((pool) => pool.close()), ...entries.map((entry) => this.stop(entry))]);
    await this.uids.close();
    const host = await this.host?.catch(() => null);
    this.host = null;
    if (host) await rm(host.seccomp.dir, { recursive: true, force: true });
  }

  /** podman and runc, checked once; refused with install instructions when missing. */
  checkHost(): Promise<ContainerHost & { seccomp: { dir: string; path: string } }> {
    this.host ??= (async () => {
      if (process.platform !== "linux")
        throw new SandboxUnavailableError(
          "container",
          `the container tier needs Linux, not ${process.platform}`,
        );
      const host = await probeContainerHost(this.options.host);
      if ("missing" in host)
        throw new SandboxUnavailableError("container", `${host.missing}: ${CONTAINER_INSTALL_HINT}`);
      // Without root a worker cannot hand the container a host uid of its own (nor bind its workspace).
      if (process.getuid?.() !== 0)
        throw new SandboxUnavailableError("container", "the container tier needs a worker running as root");
      return { ...host, seccomp: await writeContainerSeccompProfile() };
    })();
    return this.host;
  }

  private async start(spec: SandboxSpec): Promise<ContainerSandbox> {
    const host = await this.checkHost();
    await this.sweepStale(host);
    const image = spec.image as string;
    await this.pulled(host, image);
    const hostWorkspace = workspaceDirectory(this.options.workspaceRoot, spec.sessionId);
    const idleTimeoutMs = this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    // Refilled after this session's container is handed out, in the background.
    const refill = () => void this.sweepStaleSlots().then(() => this.poolOf(image).fill());
    // Packages, credentials and mounts are fixed at the container's start: such a session starts
    // its own, like the bwrap tier's.
    const poolable =
      spec.preparedPackages === undefined &&
      (spec.credentials?.variables.length ?? 0) === 0 &&
      spec.mounts === undefined;
    const pooled = poolable ? await this.claimPooled(image, hostWorkspace) : null;
    if (pooled) {
      pooled.egress.setPolicy(spec.networking);
      const owner = pooled.owner as HostOwner;
      refill();
      return new ContainerSandbox(
        owner,
        hostWorkspace,
        this.launchOf(host, image, owner, hostWorkspace, pooled.egress),
        {
          live: pooled.process,
          egress: pooled.egress,
          idleTimeoutMs,
          limits: this.watch(hostWorkspace),
        },
      );
    }
    if (poolable) refill();
    const uid = await this.uids.allocate();
    const owner: HostOwner = { uid, gid: uid };
    let egress: EgressProxy | null = null;
    try {
      await prepareWorkspace(hostWorkspace, owner);
      if (spec.mounts) await prepareWritableMounts(spec.mounts, owner);
      egress = await EgressProxy.start(owner, this.options.egress);
      egress.setPolicy(spec.networking);
      const secrets =
        spec.credentials && spec.credentials.variables.length > 0
          ? await EgressSecrets.create(spec.credentials.variables)
          : null;
      const withSecrets = secrets !== null && secrets.table.length > 0 ? secrets : null;
      let extraEnv: Record<string, string> | undefined;
      if (withSecrets) {
        egress.useSecrets(withSecrets);
        await withSecrets.ca.writeBundle(egress.directory);
        const bundle = `${EGRESS_SANDBOX_DIR}/${CA_BUNDLE_NAME}`;
        extraEnv = {
          ...withSecrets.environment(),
          ...Object.fromEntries(CA_BUNDLE_VARIABLES.map((name) => [name, bundle])),
        };
      }
      const launch: Launch = {
        ...this.launchOf(host, image, owner, hostWorkspace, egress),
        ...(spec.preparedPackages ? { packagesDir: spec.preparedPackages.dir } : {}),
        ...(spec.mounts ? { mounts: spec.mounts } : {}),
        ...(extraEnv ? { extraEnv } : {}),
      };
      const live = await startContainer(launch);
      const sandbox = new ContainerSandbox(owner, hostWorkspace, launch, {
        live,
        egress,
        idleTimeoutMs,
        limits: this.watch(hostWorkspace),
        ...(withSecrets ? { secrets: withSecrets } : {}),
      });
      return sandbox.bindCredentials(spec.credentials);
    } catch (error) {
      await egress?.close();
      this.uids.release(uid);
      throw error;
    }
  }

  private launchOf(
    host: ContainerHost & { seccomp: { path: string } },
    image: string,
    owner: HostOwner,
    workspaceHostPath: string,
    egress: EgressProxy,
  ): Launch {
    return {
      podmanPath: host.podmanPath,
      runcPath: host.runcPath,
      ...(this.options.storage ? { storage: this.options.storage } : {}),
      seccompProfile: host.seccomp.path,
      image,
      pull: this.options.pull ?? "never",
      tlsVerify: this.options.tlsVerify ?? true,
      owner,
      limits: this.limits,
      workspaceHostPath,
      egressDir: egress.directory,
    };
  }

  /**
   * A pooled container of `image` whose slot is now `hostWorkspace`, or null. rename(2) never
   * replaces an existing workspace: the container then goes back to the pool untouched.
   */
  private async claimPooled(image: string, hostWorkspace: string): Promise<PooledSandbox | null> {
    const pool = this.poolOf(image);
    const entry = pool.take();
    if (!entry) return null;
    try {
      await mkdir(dirname(hostWorkspace), { recursive: true, mode: 0o700 });
      await rename(entry.slot, hostWorkspace);
      return entry;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR") pool.giveBack(entry);
      else await this.discardPooled(entry);
      return null;
    }
  }

  /** A container started over an empty slot, its proxy letting nothing through until a session takes it. */
  private async startPooled(image: string): Promise<PooledSandbox> {
    const host = await this.checkHost();
    await this.pulled(host, image);
    const uid = await this.uids.allocate();
    const owner: HostOwner = { uid, gid: uid };
    const slot = join(this.options.workspaceRoot, POOL_DIR, `${process.pid}-${randomUUID()}`);
    let egress: EgressProxy | null = null;
    try {
      await prepareWorkspace(slot, owner);
      egress = await EgressProxy.start(owner, this.options.egress);
      const live = await startContainer(this.launchOf(host, image, owner, slot, egress));
      return { owner, slot, process: live, egress };
    } catch (error) {
      await egress?.close();
      this.uids.release(uid);
      await rm(slot, { recursive: true, force: true });
      throw error;
    }
  }

  private async discardPooled(entry: PooledSandbox): Promise<void> {
    await entry.process.kill();
    await entry.egress.close();
    if (entry.owner && (await waitForNoProcesses(entry.owner.uid, TEARDOWN_WAIT_MS)))
      this.uids.release(entry.owner.uid);
    await rm(entry.slot, { recursive: true, force: true });
  }

  /**
   * With `pull: "missing"`, `image` is pulled (when this host's store lacks it) before any
   * container of it starts, on a clock of its own: inside `podman run` the pull would count against
   * the sandbox's start timeout, which a large image's first pull on a fresh host can outlast.
   */
  private pulled(host: ContainerHost, image: string): Promise<void> {
    if ((this.options.pull ?? "never") !== "missing") return Promise.resolve();
    let pull = this.pulls.get(image);
    if (!pull) {
      const started = pullIfMissing(
        { ...host, storage: this.options.storage },
        image,
        this.options.tlsVerify ?? true,
        this.closing.signal,
      );
      started.catch(() => {
        if (this.pulls.get(image) === started) this.pulls.delete(image);
      });
      this.pulls.set(image, started);
      pull = started;
    }
    return pull;
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

  private async stop(entry: Promise<ContainerSandbox>): Promise<void> {
    const sandbox = await entry.catch(() => null);
    if (!sandbox) return;
    await sandbox.shutdown();
    if (await waitForNoProcesses(sandbox.owner.uid, TEARDOWN_WAIT_MS)) this.uids.release(sandbox.owner.uid);
  }

  /** Containers an earlier worker process left (it died without removing them): removed once. */
  private sweepStale(host: ContainerHost): Promise<void> {
    this.staleSwept ??= (async () => {
      const { stdout } = await run(
        host.podmanPath,
        [
          ...podmanStorageArgs(this.options.storage),
          "ps",
          "--all",
          "--filter",
          `label=${CONTAINER_LABEL}`,
          "--format",
          `{{.Names}} {{.Labels}}`,
        ],
        { env: PODMAN_ENV, timeout: REMOVE_TIMEOUT_MS },
      ).catch(() => ({ stdout: "" }));
      for (const line of stdout.split("\n")) {
        const name = line.split(" ")[0];
        const pid = Number(/io\.awaken\.sandbox:(\d+)/.exec(line)?.[1]);
        if (!name?.startsWith("awaken-") || !Number.isInteger(pid) || pid === process.pid) continue;
        if (processExists(pid)) continue;
        await removeContainer({ ...host, storage: this.options.storage }, name);
      }
    })();
    return this.staleSwept;
  }

  private watch(hostWorkspace: string): SandboxLimitWatch {
    return {
      // The container's cgroup (podman --memory), read by the sandbox itself (containerMemory.ts).
      cgroup: null,
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

/** The podman a container was started with: its binary, runtime and store. */
type Podman = Pick<ContainerInvocation, "podmanPath" | "runcPath" | "storage">;

async function removeContainer(podman: Podman, name: string): Promise<void> {
  const args = [
    ...podmanStorageArgs(podman.storage),
    "--runtime",
    podman.runcPath,
    "rm",
    "--force",
    "--time",
    "0",
    "--ignore",
    name,
  ];
  await run(podman.podmanPath, args, {
    env: PODMAN_ENV,
    timeout: REMOVE_TIMEOUT_MS,
  }).catch(() => {});
}

/** Pulls `image` (admitted already, so no option) into the store unless it is there. */
async function pullIfMissing(
  podman: Podman,
  image: string,
  tlsVerify: boolean,
  signal: AbortSignal,
): Promise<void> {
  const store = podmanStorageArgs(podman.storage);
  const present = await run(podman.podmanPath, [...store, "image", "exists", image], {
    env: PODMAN_ENV,
    timeout: REMOVE_TIMEOUT_MS,
  }).then(
    () => true,
    () => false,
  );
  if (present) return;
  try {
    await run(podman.podmanPath, [...store, "pull", "--quiet", `--tls-verify=${tlsVerify}`, image], {
      env: PODMAN_ENV,
      timeout: PULL_TIMEOUT_MS,
      signal,
    });
  } catch (error) {
    // podman's last word (its command line would name this host's paths).
    const failed = error as { killed?: boolean; stderr?: unknown };
    const reason = signal.aborted
      ? "the worker is closing"
      : failed.killed
        ? `no answer within ${PULL_TIMEOUT_MS / 1000} s`
        : String(failed.stderr ?? "")
            .trim()
            .split("\n")
            .at(-1) || "podman pull failed";
    throw new SandboxUnavailableError("container", `could not pull the image ${image}: ${reason}`);
  }
}

/** Each started container's name, for its memory cgroup (containerMemory.ts). */
const CONTAINER_NAMES = new WeakMap<SupervisedBwrap, string>();

/** A container named afresh running the supervisor; resolves once it listens. */
async function startContainer(launch: Launch): Promise<SupervisedBwrap> {
  const name = `awaken-${process.pid}-${randomUUID()}`;
  const proxySocket =
    launch.egressDir === undefined ? undefined : `${EGRESS_SANDBOX_DIR}/${EGRESS_SOCKET_NAME}`;
  // argv[0] "perl" is the image's (found on its PATH): no host binary is bound in.
  const argv = supervisorArgv("perl", process.arch, proxySocket);
  const { command, args } = containerCommand({ ...launch, name, argv });
  const prepared: PreparedSpawn = {
    command,
    args,
    options: { cwd: "/", env: PODMAN_ENV, stdio: ["pipe", "pipe", "pipe"] },
    started: async () => {},
    close: async () => {},
  };
  const tree: SupervisedTree = {
    tier: "container",
    // The container outlives its podman client when only the client is killed: remove it first.
    killTree: async (pid, exited) => {
      await removeContainer(launch, name);
      const gone = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1_000).unref()),
      ]);
      if (!gone) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
    },
  };
  try {
    const live = await SupervisedBwrap.startPrepared(prepared, tree);
    CONTAINER_NAMES.set(live, name);
    return live;
  } catch (error) {
    await removeContainer(launch, name);
    throw error;
  }
}

/** One session's container sandbox: its workspace, its host uid, and the live container. */
export class ContainerSandbox implements Sandbox {
  readonly tier = "container" as const;
  readonly workspacePath = CONTAINER_WORKSPACE;
  private readonly stopping = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  /** Long-lived processes (stdio MCP servers), each in a container of its own; killed with it. */
  private readonly processes = new Set<LiveProcess>();
  private live: SupervisedBwrap | null;
  private liveBusy = false;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly egress: EgressProxy;
  private readonly secrets: EgressSecrets | null;
  private readonly idleTimeoutMs: number;
  private readonly limitWatch: SandboxLimitWatch;
  /** The live container's memory cgroup file, found once per container. */
  private oomFile: { name: string; file: Promise<string> } | null = null;

  constructor(
    readonly owner: HostOwner,
    readonly hostWorkspace: string,
    private readonly launch: Launch,
    options: {
      live: SupervisedBwrap;
      egress: EgressProxy;
      idleTimeoutMs: number;
      limits: SandboxLimitWatch;
      secrets?: EgressSecrets;
    },
  ) {
    this.live = options.live;
    this.egress = options.egress;
    this.secrets = options.secrets ?? null;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.limitWatch = { ...options.limits, cgroup: containerCgroup(() => this.oomKills()) };
    this.armIdleTimer();
  }

  /** OOM kills in the live container's memory cgroup (none running: 0). */
  private async oomKills(): Promise<number> {
    const name = this.live ? CONTAINER_NAMES.get(this.live) : undefined;
    if (name === undefined) return 0;
    if (this.oomFile?.name !== name) {
      const file = containerOomFile(
        this.launch.podmanPath,
        name,
        PODMAN_ENV,
        podmanStorageArgs(this.launch.storage),
      );
      file.catch(() => {});
      this.oomFile = { name, file };
    }
    return readOomKills(await this.oomFile.file);
  }

  bindCredentials(credentials: SandboxCredentials | undefined): this {
    if (credentials && this.secrets) this.secrets.bind(credentials);
    return this;
  }

  /** The live container's supervisor, if one runs (tests look inside). */
  get process(): SupervisedBwrap | null {
    return this.live;
  }

  exec(request: ExecRequest): Promise<ExecResult> {
    if (this.stopping.signal.aborted) return Promise.reject(new Error("the sandbox has been destroyed"));
    if (request.argv.length === 0) return Promise.reject(new Error("exec: empty argv"));
    const guarded = { ...request, signal: AbortSignal.any([request.signal, this.stopping.signal]) };
    const exec = execWithinLimits(this.limitWatch, guarded, (limited) =>
      this.liveBusy ? this.runOneShot(limited) : this.runLive(limited),
    );
    this.running.add(exec);
    const forget = () => this.running.delete(exec);
    exec.then(forget, forget);
    return exec;
  }

  /**
   * A long-lived process (a stdio MCP server) in a container of its own: same image, workspace,
   * uid, flags and limits as the session's commands, its variables passed on stdin behind the
   * preamble (processEnvironment.ts), never on podman's command line. Like the bwrap tier's, it
   * reaches the network only with `egress` (through a relay of its own), and its HOME is its own
   * /tmp, not the workspace.
   */
  async spawn(request: SpawnRequest): Promise<SandboxProcess> {
    if (this.stopping.signal.aborted) throw new Error("the sandbox has been destroyed");
    if (request.argv.length === 0) throw new Error("spawn: empty argv");
    if (request.argv.some((arg) => arg.includes("\0"))) throw new Error("spawn: an argv entry contains NUL");
    const { egressDir, extraEnv, ...launch } = this.launch;
    const name = `awaken-${process.pid}-${randomUUID()}`;
    // With egress, the same proxy directory and placeholders as commands, and a relay of its own.
    const relayed = request.egress === true && egressDir !== undefined;
    const { command, args } = containerCommand({
      ...launch,
      ...(relayed ? { egressDir, ...(extraEnv ? { extraEnv } : {}) } : {}),
      name,
      home: PROCESS_HOME,
      argv: relayed
        ? relayedPreambleArgv({ bashPath: "bash", perlPath: "perl" }, request.argv)
        : preambleArgv("bash", request.argv),
    });
    const started = await LiveProcess.start(
      command,
      args,
      { cwd: "/", env: PODMAN_ENV, stdio: ["pipe", "pipe", "pipe"] },
      {
        maxStderrBytes: request.maxStderrBytes,
        signal: AbortSignal.any([request.signal, this.stopping.signal]),
        preamble: environmentPreamble(request.env),
        killTree: async () => removeContainer(launch, name),
      },
    );
    this.processes.add(started);
    void started.exited.then(async () => {
      this.processes.delete(started);
      await removeContainer(launch, name);
    });
    return started;
  }

  /** In the egress proxy's private directory, which a process spawned with egress has bound. */
  serveLocal(name: string, server: Server): Promise<string[]> {
    // The image's own perl, found on its PATH as the egress relay's is.
    return serveInPrivateDirectory(server, this.egress.directory, name, this.owner, "perl");
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
    await this.egress.close();
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
          if (!(error instanceof NotAcceptedError) || attempt > 0 || request.signal.aborted) throw error;
        }
      }
    } finally {
      this.liveBusy = false;
      this.armIdleTimer();
    }
  }

  private async ensureLive(): Promise<SupervisedBwrap> {
    if (this.live?.alive) return this.live;
    const live = await startContainer(this.launch);
    if (this.stopping.signal.aborted) {
      await live.kill();
      throw new Error("the sandbox has been destroyed");
    }
    this.live = live;
    return live;
  }

  /** A command arriving while another runs gets a container of its own (same workspace, same uid). */
  private async runOneShot(request: ExecRequest): Promise<ExecResult> {
    const oneShot = await startContainer(this.launch);
    try {
      return await oneShot.exec(request);
    } finally {
      await oneShot.kill();
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
