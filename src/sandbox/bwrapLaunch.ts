import type { ChildProcess, SpawnOptions, StdioOptions } from "node:child_process";
import { type FileHandle, mkdtemp, open, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import {
  bwrapCommand,
  type ResourceLimits,
  SANDBOX_FDS,
  SANDBOX_GROUP,
  SANDBOX_PASSWD,
} from "./bwrapArgs.js";
import { type BwrapHost, probeBwrapHost } from "./bwrapHost.js";
import { type SandboxMounts, SandboxUnavailableError } from "./ports.js";
import type { SandboxCgroup } from "./sandboxMemory.js";
import { MOUNT_POINTS, type MountPoint, prepareMountPoints, privateMountsArgv } from "./sandboxMounts.js";
import type { HostOwner } from "./sandboxWorkspace.js";
import { seccompProgram } from "./seccompFilter.js";
import { supervisorArgv } from "./supervisor.js";

/** Host facts checked once, and the files whose descriptors every bwrap start is given. */
export interface Prerequisites {
  host: BwrapHost;
  /** Private directory with `passwd`, `group` and `seccomp.bpf`. */
  stateDir: string;
}

const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on every worker host";

export async function loadPrerequisites(): Promise<Prerequisites> {
  if (process.platform !== "linux") {
    throw new SandboxUnavailableError("bwrap", `the bwrap tier needs Linux, not ${process.platform}`);
  }
  let seccomp: Buffer;
  try {
    seccomp = seccompProgram();
    supervisorArgv("perl");
  } catch (error) {
    throw new SandboxUnavailableError("bwrap", (error as Error).message);
  }
  const host = await probeBwrapHost();
  if (host === null) {
    throw new SandboxUnavailableError(
      "bwrap",
      `bubblewrap (bwrap), prlimit, bash or perl (as root also unshare, mount, setpriv) is missing or does not run on this worker: ${INSTALL_HINT}`,
    );
  }
  if (host.mountTools) await prepareMountPoints();
  const stateDir = await mkdtemp(join(tmpdir(), "awaken-bwrap-"));
  await writeFile(join(stateDir, "passwd"), SANDBOX_PASSWD);
  await writeFile(join(stateDir, "group"), SANDBOX_GROUP);
  await writeFile(join(stateDir, "seccomp.bpf"), seccomp);
  return { host, stateDir };
}

/** What one bwrap process is started from. */
export interface BwrapLaunch {
  prerequisites: Prerequisites;
  limits: ResourceLimits;
  /** The unprivileged host uid it runs as; null when the worker itself is not root. */
  owner: HostOwner | null;
  /** Host directory bound at /workspace. */
  workspaceHostPath: string;
  /** Host directory of the sandbox's egress proxy socket (egressProxy.ts); none: no egress. */
  egressDir?: string;
  /** Host directory of the session's prepared packages, bound read-only; none: no packages. */
  packagesDir?: string;
  /** The session's resource mounts, checked; their root is bound like the workspace. */
  mounts?: SandboxMounts;
  /** More variables for the commands (credential placeholders, the egress CA bundle); never secrets. */
  extraEnv?: Readonly<Record<string, string>>;
  /** The sandbox's memory cgroup; none: memory is bounded per process (RLIMIT_DATA). */
  cgroup?: SandboxCgroup;
  /** HOME inside; none: the workspace. */
  home?: string;
}

/** A spawnable bwrap command and the descriptors it reads at start; close them once spawned. */
export interface PreparedSpawn {
  command: string;
  args: string[];
  options: Pick<SpawnOptions, "cwd" | "env" | "uid" | "gid" | "stdio">;
  /**
   * To call once spawned: moves the launcher into the sandbox's cgroup and lets it go on. If it
   * rejects, the launcher exits without starting anything.
   */
  started(child: ChildProcess): Promise<void>;
  close(): Promise<void>;
}

/**
 * The command line and spawn options of bwrap running `argv`. Never as host root, whatever path
 * led here: root's bwrap maps the sandbox onto host uid 0 (measured: it could read /etc/shadow).
 */
export async function prepareSpawn(launch: BwrapLaunch, argv: string[]): Promise<PreparedSpawn> {
  const hostUid = launch.owner?.uid ?? process.getuid?.();
  if (hostUid === 0 || hostUid === undefined) throw new Error("refusing to start bwrap as host root");
  const sources: Record<MountPoint, string | undefined> = {
    workspace: launch.workspaceHostPath,
    egress: launch.egressDir,
    packages: launch.packagesDir,
    resources: launch.mounts?.hostRoot,
  };
  // A root worker binds the sources on fixed mount points in a private namespace, then drops to
  // the sandbox's uid (sandboxMounts.ts): bwrap sees only the mount points. Otherwise bwrap runs
  // as the worker itself, which reaches its own directories.
  const reach = launch.owner === null ? null : privateMounts(launch, launch.owner, sources);
  const path = (point: MountPoint): string | undefined =>
    sources[point] === undefined ? undefined : reach ? MOUNT_POINTS[point] : sources[point];
  const egressDir = path("egress");
  const packagesDir = path("packages");
  const mountsRoot = path("resources");
  const { command, args } = bwrapCommand({
    ...launch.prerequisites.host,
    limits: launch.limits,
    workspaceHostPath: path("workspace") ?? launch.workspaceHostPath,
    ...(egressDir === undefined ? {} : { egressDir }),
    ...(packagesDir === undefined ? {} : { packagesDir }),
    ...(launch.mounts === undefined || mountsRoot === undefined
      ? {}
      : { mounts: { hostRoot: mountsRoot, entries: launch.mounts.entries } }),
    ...(launch.extraEnv === undefined ? {} : { extraEnv: launch.extraEnv }),
    ...(launch.cgroup === undefined ? { dataBytes: launch.limits.memoryBytes } : { gated: true }),
    ...(reach === null ? {} : { launcher: reach }),
    ...(launch.home === undefined ? {} : { home: launch.home }),
    argv,
  });
  const files = await openSandboxFiles(launch.prerequisites.stateDir);
  const stdio: StdioOptions = ["pipe", "pipe", "pipe"];
  stdio[SANDBOX_FDS.passwd] = files[0].fd;
  stdio[SANDBOX_FDS.group] = files[1].fd;
  stdio[SANDBOX_FDS.seccomp] = files[2].fd;
  const cgroup = launch.cgroup;
  if (cgroup) stdio[SANDBOX_FDS.gate] = "pipe";
  return {
    command,
    args,
    // An empty environment for prlimit and bwrap; bwrap sets the command's own (--setenv).
    // cwd "/": the worker's directory may not be reachable by the sandbox uid. A root worker's
    // launcher drops to the sandbox uid itself (setpriv), after its private mounts.
    options: { cwd: "/", env: {}, stdio, ...(launch.owner === null || reach ? {} : launch.owner) },
    started: async (child) => {
      if (!cgroup) return;
      const gate = (child.stdio as readonly unknown[])[SANDBOX_FDS.gate];
      if (!(gate instanceof Writable) || child.pid === undefined) throw new Error("the launcher has no gate");
      gate.on("error", () => {
        // The launcher is gone; its exit is handled by the caller.
      });
      try {
        await cgroup.add(child.pid);
      } catch (error) {
        gate.destroy();
        throw error;
      }
      gate.end("go\n");
    },
    close: async () => {
      await Promise.all(files.map((file) => file.close()));
    },
  };
}

function privateMounts(
  launch: BwrapLaunch,
  owner: HostOwner,
  sources: Record<MountPoint, string | undefined>,
): string[] {
  const { host } = launch.prerequisites;
  if (!host.mountTools) throw new Error("a root worker needs unshare, mount and setpriv to start a sandbox");
  const binds = (Object.keys(sources) as MountPoint[]).flatMap((point) => {
    const source = sources[point];
    return source === undefined ? [] : [{ source, point }];
  });
  return privateMountsArgv({ ...host.mountTools, bashPath: host.bashPath }, owner, binds);
}

/** Fresh descriptors per start: bwrap reads each to its end. */
async function openSandboxFiles(stateDir: string): Promise<[FileHandle, FileHandle, FileHandle]> {
  const opened = await Promise.allSettled(
    ["passwd", "group", "seccomp.bpf"].map((name) => open(join(stateDir, name), "r")),
  );
  const handles = opened.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failure = opened.find((result) => result.status === "rejected");
  if (failure) {
    await Promise.all(handles.map((handle) => handle.close()));
    throw failure.reason;
  }
  return [handles[0]!, handles[1]!, handles[2]!];
}
