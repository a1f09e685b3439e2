import type { SpawnOptions, StdioOptions } from "node:child_process";
import { type FileHandle, mkdtemp, open, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  bwrapCommand,
  type ResourceLimits,
  SANDBOX_FDS,
  SANDBOX_GROUP,
  SANDBOX_PASSWD,
} from "./bwrapArgs.js";
import { type BwrapHost, probeBwrapHost } from "./bwrapHost.js";
import { SandboxUnavailableError } from "./ports.js";
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
      `bubblewrap (bwrap), prlimit, bash or perl is missing or does not run on this worker: ${INSTALL_HINT}`,
    );
  }
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
  /** More variables for the commands (credential placeholders, the egress CA bundle); never secrets. */
  extraEnv?: Readonly<Record<string, string>>;
}

/** A spawnable bwrap command and the descriptors it reads at start; close them once spawned. */
export interface PreparedSpawn {
  command: string;
  args: string[];
  options: Pick<SpawnOptions, "cwd" | "env" | "uid" | "gid" | "stdio">;
  close(): Promise<void>;
}

/**
 * The command line and spawn options of bwrap running `argv`. Never as host root, whatever path
 * led here: root's bwrap maps the sandbox onto host uid 0 (measured: it could read /etc/shadow).
 */
export async function prepareSpawn(launch: BwrapLaunch, argv: string[]): Promise<PreparedSpawn> {
  const hostUid = launch.owner?.uid ?? process.getuid?.();
  if (hostUid === 0 || hostUid === undefined) throw new Error("refusing to start bwrap as host root");
  const { command, args } = bwrapCommand({
    ...launch.prerequisites.host,
    limits: launch.limits,
    workspaceHostPath: launch.workspaceHostPath,
    ...(launch.egressDir === undefined ? {} : { egressDir: launch.egressDir }),
    ...(launch.packagesDir === undefined ? {} : { packagesDir: launch.packagesDir }),
    ...(launch.extraEnv === undefined ? {} : { extraEnv: launch.extraEnv }),
    argv,
  });
  const files = await openSandboxFiles(launch.prerequisites.stateDir);
  const stdio: StdioOptions = ["pipe", "pipe", "pipe"];
  stdio[SANDBOX_FDS.passwd] = files[0].fd;
  stdio[SANDBOX_FDS.group] = files[1].fd;
  stdio[SANDBOX_FDS.seccomp] = files[2].fd;
  return {
    command,
    args,
    // An empty environment for prlimit and bwrap; bwrap sets the command's own (--setenv).
    // cwd "/": the worker's directory may not be reachable by the sandbox uid.
    options: { cwd: "/", env: {}, stdio, ...(launch.owner ?? {}) },
    close: async () => {
      await Promise.all(files.map((file) => file.close()));
    },
  };
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
