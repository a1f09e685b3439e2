/**
 * Checks a sandbox's resource mounts before any tier binds them. A mount path names where host
 * content appears inside the sandbox, so it must never shadow what the sandbox itself is made of
 * (system directories, /workspace, /proc, /dev, /tmp, the packages or egress directories), never
 * sit inside another mount (bwrap would create its mount point inside the other's host directory),
 * and its host path must stay inside the session's mount root.
 */
import { isAbsolute, normalize, posix } from "node:path";
import { type SandboxMounts, type SandboxTier, SandboxUnavailableError } from "./ports.js";
import { type HostOwner, prepareWorkspace } from "./sandboxWorkspace.js";

/** Sandbox paths no resource may be mounted at or under. */
const RESERVED = [
  "/bin",
  "/boot",
  "/dev",
  "/etc",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/opt/awaken",
  "/proc",
  "/root",
  "/run",
  "/sbin",
  "/sys",
  "/tmp",
  "/usr",
  "/var",
  "/workspace",
];

/** Longest mount path accepted (bwrap and the kernel take far more; nothing legitimate needs it). */
const MAX_PATH_LENGTH = 1024;

/** Why `path` cannot be a sandbox mount path, or null when it can. */
export function sandboxPathProblem(path: string): string | null {
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) return "must be 1 to 1024 characters";
  if (path.includes("\0")) return "must not contain NUL";
  if (!path.startsWith("/")) return "must be absolute";
  if (posix.normalize(path) !== path || path.endsWith("/"))
    return "must be normalized (no `.`, `..`, `//` or trailing `/`)";
  if (path === "/") return "must not be the root";
  for (const reserved of RESERVED) {
    if (path === reserved || path.startsWith(`${reserved}/`)) return `must not be at or under ${reserved}`;
  }
  return null;
}

function isUnder(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}

/**
 * Throws `SandboxUnavailableError` naming the first mount that cannot be bound: a bad sandbox path,
 * two mounts at or under one another, or a host path outside the root.
 */
export function checkSandboxMounts(tier: SandboxTier, mounts: SandboxMounts): void {
  if (!isAbsolute(mounts.hostRoot) || normalize(mounts.hostRoot) !== mounts.hostRoot)
    throw new SandboxUnavailableError(tier, "the mounts' host root must be an absolute, normalized path");
  const seen: string[] = [];
  for (const mount of mounts.entries) {
    const problem = sandboxPathProblem(mount.sandboxPath);
    if (problem)
      throw new SandboxUnavailableError(
        tier,
        `mount path ${JSON.stringify(mount.sandboxPath.slice(0, 200))} ${problem}`,
      );
    const clash = seen.find(
      (other) => isUnder(mount.sandboxPath, other) || isUnder(other, mount.sandboxPath),
    );
    if (clash !== undefined)
      throw new SandboxUnavailableError(tier, `mount paths ${clash} and ${mount.sandboxPath} overlap`);
    seen.push(mount.sandboxPath);
    const host = posix.normalize(mount.hostPath);
    if (host !== mount.hostPath || host.startsWith("/") || host === "." || host.split("/").includes(".."))
      throw new SandboxUnavailableError(
        tier,
        `mount ${mount.sandboxPath}: its host path must stay inside the root`,
      );
  }
}

/** Host path of one mount's content. */
export function mountHostPath(root: string, hostPath: string): string {
  return posix.join(root, hostPath);
}

/**
 * Gives each writable mount's host content to the sandbox's uid (a root worker's sandboxes run as
 * a uid of their own), private to it like a workspace. Read-only content stays the worker's, which
 * wrote it readable by everyone it is shown to and writable by nobody else.
 */
export async function prepareWritableMounts(mounts: SandboxMounts, owner: HostOwner | null): Promise<void> {
  for (const mount of mounts.entries) {
    if (!mount.readOnly) await prepareWorkspace(mountHostPath(mounts.hostRoot, mount.hostPath), owner);
  }
}

/** Whether two mount sets bind the same content at the same paths the same way. */
export function sameMounts(a: SandboxMounts | undefined, b: SandboxMounts): boolean {
  if (a === undefined || a.hostRoot !== b.hostRoot || a.entries.length !== b.entries.length) return false;
  return a.entries.every((mount, i) => {
    const other = b.entries[i];
    return (
      other !== undefined &&
      other.sandboxPath === mount.sandboxPath &&
      other.hostPath === mount.hostPath &&
      other.readOnly === mount.readOnly
    );
  });
}
