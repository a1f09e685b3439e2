import { posix } from "node:path";
import { invalid } from "../../kernel/errors.js";

/** Longest mount path accepted (bytes of UTF-8). */
export const MOUNT_PATH_MAX_BYTES = 512;

/**
 * Directories a resource may never be mounted at or under: the sandbox's system, and the product's
 * own install. A mount there would shadow what the sandbox runs on.
 */
const SYSTEM_DIRS = [
  "/proc",
  "/sys",
  "/dev",
  "/etc",
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/boot",
  "/run",
  "/var/run",
  "/opt/awaken",
] as const;

/** The SDK's defaults: files under /mnt/session/uploads, repositories under /workspace, memory under /mnt/memory. */
export const defaultFileMount = (fileId: string): string => `/mnt/session/uploads/${fileId}`;
export const defaultRepositoryMount = (repoName: string): string => `/workspace/${repoName}`;
export const defaultMemoryMount = (slug: string): string => `/mnt/memory/${slug}`;

/**
 * Refuses a mount path that is not absolute and normalized, names a system directory, or is too
 * long; `field` names it in the message. Client input: every rule is a 400, never a 500.
 */
export function checkMountPath(path: string, field: string): string {
  const bad = (why: string) => invalid(`${field}: ${JSON.stringify(path)} ${why}`);
  if (Buffer.byteLength(path, "utf8") > MOUNT_PATH_MAX_BYTES)
    throw invalid(`${field}: a mount path is at most ${MOUNT_PATH_MAX_BYTES} bytes`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(path)) throw bad("contains a control character (NUL, newline…)");
  if (path.includes("\\")) throw bad("contains a backslash; use / to separate path segments");
  if (!path.startsWith("/")) throw bad("is not an absolute path (it must start with /)");
  if (path.split("/").some((segment) => segment === ".." || segment === "."))
    throw bad("contains a . or .. segment");
  if (posix.normalize(path) !== path || (path.length > 1 && path.endsWith("/")))
    throw bad("is not normalized (no repeated or trailing /)");
  if (path === "/") throw bad("is the root directory; mount a resource in a directory of its own");
  const system = SYSTEM_DIRS.find((dir) => path === dir || path.startsWith(`${dir}/`));
  if (system) throw bad(`is under ${system}, a system directory resources may not be mounted in`);
  return path;
}

/** Whether two mounts overlap: the same path, or one inside the other. */
export function mountsOverlap(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * The last path segment a default mount is named after (a repository's name, a memory store's
 * name): letters, digits, `.`, `_` and `-` kept, anything else a `-`; never `.`/`..` or empty.
 */
export function mountSegment(name: string, fallback: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 100);
  return slug === "" ? fallback : slug;
}
