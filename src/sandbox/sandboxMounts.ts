/**
 * How a root worker's sandbox reaches its host directories (workspace, egress socket directory,
 * prepared packages, resource mounts) whatever the host's layout: bwrap runs as an unprivileged uid and resolves
 * and mounts every bind source by path as that uid, so a workspace under a 0700 directory (a
 * data dir, a home directory, /root) is out of its reach. So the launcher, still root, enters a
 * private mount namespace of its own (`unshare --mount`, propagation private: nothing it mounts is
 * seen by the host), binds each source onto a fixed, root-owned, world-searchable mount point,
 * then drops to the sandbox's uid (`setpriv`) and starts bwrap over the mount points.
 *
 * The host's directories keep their modes (the data dir stays 0700), and bwrap's command line
 * (the sandbox's /proc/1/cmdline) names only the mount points, never a host path.
 */
import { lstat, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { launcherBashArgs } from "./launcherShell.js";
import { SandboxUnavailableError } from "./ports.js";
import type { HostOwner } from "./sandboxWorkspace.js";

/** Root-owned (0755) and empty on the host; mounted on only inside each launcher's namespace. */
export const MOUNT_POINTS_DIR = "/run/awaken-sandbox-mounts";

export const MOUNT_POINTS = {
  workspace: join(MOUNT_POINTS_DIR, "workspace"),
  egress: join(MOUNT_POINTS_DIR, "egress"),
  packages: join(MOUNT_POINTS_DIR, "packages"),
  /** The session's resource mounts' host root (ports.ts `SandboxMounts`). */
  resources: join(MOUNT_POINTS_DIR, "resources"),
} as const;

export type MountPoint = keyof typeof MOUNT_POINTS;

/** util-linux tools the launcher runs as root before the privilege drop. */
export interface MountTools {
  unsharePath: string;
  mountPath: string;
  setprivPath: string;
}

/**
 * Creates the mount points once (root only), and refuses any that is not a plain directory of
 * root's that only root can write: a planted link or a foreign directory there would redirect a
 * sandbox's binds.
 */
export async function prepareMountPoints(dir: string = MOUNT_POINTS_DIR): Promise<void> {
  const points = [dir, ...Object.keys(MOUNT_POINTS).map((name) => join(dir, name))];
  for (const point of points) {
    try {
      await mkdir(point, { mode: 0o755 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new SandboxUnavailableError(
          "bwrap",
          `cannot create ${point} (the sandboxes' mount points): ${(error as Error).message}`,
        );
      }
    }
    const stat = await lstat(point);
    if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
      throw new SandboxUnavailableError(
        "bwrap",
        `${point} must be a directory owned by root and writable by root only (remove it and restart)`,
      );
    }
  }
}

/**
 * In the private namespace: `mount --bind` each pair, then exec the rest (setpriv …) with an empty
 * environment (`exec -c`), as the launcher before it does (bwrapArgs.ts).
 */
const BIND_THEN_EXEC =
  'mount=$1; shift; while [[ $1 != -- ]]; do "$mount" --bind "$1" "$2" || exit 125; shift 2; done; shift; exec -c "$@"';

/**
 * The argv the sandbox's `prlimit … bwrap …` runs under: a private mount namespace where each
 * source is bound on its mount point, then the drop to `owner` (no supplementary groups, as
 * spawning with a uid did). The kernel clears every capability at the switch from root.
 */
export function privateMountsArgv(
  tools: MountTools & { bashPath: string },
  owner: HostOwner,
  binds: ReadonlyArray<{ source: string; point: MountPoint }>,
): string[] {
  if (owner.uid === 0 || owner.gid === 0) throw new Error("refusing to run a sandbox as host root");
  return [
    tools.unsharePath,
    "--mount",
    "--propagation",
    "private",
    "--",
    tools.bashPath,
    // Runs as host root: root's own ~/.bashrc must not run at every sandbox start.
    ...launcherBashArgs(BIND_THEN_EXEC, "bash"),
    tools.mountPath,
    ...binds.flatMap(({ source, point }) => [source, MOUNT_POINTS[point]]),
    "--",
    tools.setprivPath,
    `--reuid=${owner.uid}`,
    `--regid=${owner.gid}`,
    "--clear-groups",
    "--",
  ];
}
