import type { ResourceLimits } from "./bwrapArgs.js";
import { type ContainerStorage, podmanStorageArgs } from "./containerStorage.js";
import { EGRESS_PROXY_URL, EGRESS_SANDBOX_DIR } from "./egressProxy.js";
import { PACKAGES_MOUNT, packagesEnv, type SandboxMounts } from "./ports.js";
import { mountHostPath } from "./resourceMounts.js";
import type { HostOwner } from "./sandboxWorkspace.js";

/**
 * The `podman run` command line of one container sandbox. Pure, so it can be read and tested alone.
 * What it holds to: no network but its own loopback (`--network none`; egress is the supervisor's
 * relay to the host proxy's socket, bound read-only), no capabilities, no privilege gain, a
 * read-only root, an unprivileged host uid (no user namespace: the uid is the host's), podman's
 * default seccomp profile less what the bwrap tier's filter refuses, the workspace as the only writable host path, memory and process
 * limits in the container's cgroup, the same rlimits as the bwrap tier.
 */

export const CONTAINER_WORKSPACE = "/workspace";
/** Every container of ours carries this label (value: the worker's pid), to find leftovers. */
export const CONTAINER_LABEL = "io.awaken.sandbox";
const CONTAINER_PATH = "/usr/local/bin:/usr/bin:/bin";

export interface ContainerInvocation {
  podmanPath: string;
  runcPath: string;
  /** This host's own image store (containerStorage.ts); absent: podman's default. */
  storage?: ContainerStorage;
  /** Unique per container: `awaken-<pid>-<uuid>`. */
  name: string;
  image: string;
  /** Where the image may come from: the local store only, or a registry (by digest) as well. */
  pull: "never" | "missing";
  tlsVerify: boolean;
  owner: HostOwner;
  limits: ResourceLimits;
  workspaceHostPath: string;
  egressDir?: string;
  packagesDir?: string;
  /** The session's resource mounts, checked (checkSandboxMounts): each bound at its sandbox path. */
  mounts?: SandboxMounts;
  /** Credential placeholders and the egress CA bundle: never secrets. */
  extraEnv?: Readonly<Record<string, string>>;
  /** The seccomp profile (containerSeccomp.ts). */
  seccompProfile: string;
  /** HOME inside; none: the workspace. */
  home?: string;
  /** The program the container runs (the supervisor): argv[0] is found on the image's PATH. */
  argv: readonly string[];
}

/** A path given to `--mount`, whose syntax is comma-separated: refused rather than mis-parsed. */
function mountSource(path: string): string {
  if (!path.startsWith("/") || /[,=\n\0]/.test(path)) throw new Error(`not a mountable path: ${path}`);
  return path;
}

function resourceBinds(mounts: SandboxMounts | undefined): string[] {
  if (mounts === undefined) return [];
  return mounts.entries.flatMap((mount) => [
    "--mount",
    `type=bind,src=${mountSource(mountHostPath(mounts.hostRoot, mount.hostPath))},dst=${mountSource(mount.sandboxPath)},${mount.readOnly ? "ro" : "rw"}`,
  ]);
}

export function containerCommand(invocation: ContainerInvocation): { command: string; args: string[] } {
  const { limits, owner } = invocation;
  const [entrypoint, ...rest] = invocation.argv;
  if (entrypoint === undefined) throw new Error("containerCommand: empty argv");
  const env: Record<string, string> = {
    ...(invocation.packagesDir === undefined
      ? { PATH: CONTAINER_PATH }
      : packagesEnv(PACKAGES_MOUNT, CONTAINER_PATH)),
    HOME: invocation.home ?? CONTAINER_WORKSPACE,
    LANG: "C.UTF-8",
    ...(invocation.egressDir === undefined
      ? {}
      : Object.fromEntries(
          ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"].map((name) => [name, EGRESS_PROXY_URL]),
        )),
    ...invocation.extraEnv,
  };
  const args = [
    ...podmanStorageArgs(invocation.storage),
    "--runtime",
    invocation.runcPath,
    "run",
    "--rm",
    "--interactive",
    "--name",
    invocation.name,
    "--label",
    `${CONTAINER_LABEL}=${process.pid}`,
    `--pull=${invocation.pull}`,
    `--tls-verify=${invocation.tlsVerify}`,
    // Output goes to the supervisor's pipe only, never into a container log on disk.
    "--log-driver=none",
    "--network=none",
    "--hostname=sandbox",
    "--user",
    `${owner.uid}:${owner.gid}`,
    "--cap-drop=all",
    "--security-opt=no-new-privileges",
    `--security-opt=seccomp=${invocation.seccompProfile}`,
    // No passwd/group entry generated for the uid (bound over the image's): nothing of the host's.
    "--passwd=false",
    "--read-only",
    "--read-only-tmpfs=false",
    "--tmpfs",
    `/tmp:rw,nosuid,nodev,size=${limits.tmpBytes},mode=1777`,
    "--tmpfs",
    `/dev/shm:rw,nosuid,nodev,noexec,size=${limits.tmpBytes},mode=1777`,
    `--memory=${limits.memoryBytes}`,
    `--memory-swap=${limits.memoryBytes}`,
    `--pids-limit=${limits.processes}`,
    // Given explicitly: podman's defaults exceed what this kind of host lets a container set.
    `--ulimit=nofile=${limits.openFiles}:${limits.openFiles}`,
    `--ulimit=nproc=${limits.processes}:${limits.processes}`,
    `--ulimit=fsize=${limits.fileSizeBytes}:${limits.fileSizeBytes}`,
    `--ulimit=cpu=${limits.cpuSeconds}:${limits.cpuSeconds}`,
    "--mount",
    `type=bind,src=${mountSource(invocation.workspaceHostPath)},dst=${CONTAINER_WORKSPACE},rw`,
    ...(invocation.egressDir === undefined
      ? []
      : ["--mount", `type=bind,src=${mountSource(invocation.egressDir)},dst=${EGRESS_SANDBOX_DIR},ro`]),
    ...(invocation.packagesDir === undefined
      ? []
      : ["--mount", `type=bind,src=${mountSource(invocation.packagesDir)},dst=${PACKAGES_MOUNT},ro`]),
    ...resourceBinds(invocation.mounts),
    "--workdir",
    CONTAINER_WORKSPACE,
    ...Object.entries(env).flatMap(([name, value]) => ["--env", `${name}=${value}`]),
    "--entrypoint",
    entrypoint,
    // The image reference was validated (kernel/containerImages.ts); `--` is not accepted by
    // `podman run` before the image, so the shape check is what keeps it from being an option.
    invocation.image,
    ...rest,
  ];
  return { command: invocation.podmanPath, args };
}
