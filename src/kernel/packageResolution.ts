/**
 * An environment revision's frozen package resolution: what its package requirement resolved to,
 * once, so every worker installs the same bytes for the same revision. npm is frozen as its
 * lockfile (exact versions, registry tarball URLs and integrity hashes); pip as exact
 * `name==version --hash=sha256:…` lines (installed with `--require-hashes`). A manager that could
 * not be frozen says so (`unfrozen`) and is installed by range, as before. The id is a digest of the canonical content, so equal
 * resolutions have equal ids wherever they were made.
 *
 * A lockfile is data from a registry: it is checked here (every entry a registry tarball with an
 * integrity hash, no link, path or git source) before it is recorded and again before it is used.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "./canonicalJson.js";

export interface PackageResolutionContent {
  /** The content's format; a later format gets a new number. */
  format: 1;
  /** npm's lockfile (package-lock.json, v2 or v3) for the revision's npm list; null without one. */
  npm: { lockfile: NpmLockfile } | null;
  /** pip's exact requirements, one `name==version --hash=sha256:<hex>` each; null without a pip list. */
  pip: { requirements: string[] } | null;
  /** Managers the revision lists that are installed by range, not frozen (pip when it gave no hashes). */
  unfrozen: string[];
}

export interface PackageResolution extends PackageResolutionContent {
  /** `pkgres_` and the first 32 hex digits of the content's SHA-256. */
  id: string;
}

export interface NpmLockfile {
  lockfileVersion: number;
  packages: Record<string, NpmLockEntry>;
  [key: string]: unknown;
}

interface NpmLockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  [key: string]: unknown;
}

/** One frozen pip line: a normalized name, an exact version, the archive's SHA-256. */
const PIP_LINE = /^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9A-Za-z.!+_-]+ --hash=sha256:[0-9a-f]{64}$/;
const ID_PATTERN = /^pkgres_[0-9a-f]{32}$/;
const EXACT_VERSION = /^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const INTEGRITY =
  /^(?:sha512|sha384|sha256|sha1)-[A-Za-z0-9+/]+=*(?: (?:sha512|sha384|sha256|sha1)-[A-Za-z0-9+/]+=*)*$/;
const ENTRY_PATH = /^(?:node_modules\/(?:@[a-z0-9][a-z0-9._~-]*\/)?[A-Za-z0-9][A-Za-z0-9._~-]*\/?)+$/;

export function isPackageResolutionId(value: unknown): value is string {
  return typeof value === "string" && ID_PATTERN.test(value);
}

export function packageResolutionId(content: PackageResolutionContent): string {
  const digest = createHash("sha256").update(canonicalJson(content)).digest("hex");
  return `pkgres_${digest.slice(0, 32)}`;
}

/** The resolution of `content`, with its id. */
export function packageResolution(content: PackageResolutionContent): PackageResolution {
  return { id: packageResolutionId(content), ...content };
}

/**
 * Why `lockfile` is not a plain registry lockfile (null when it is): every installed entry must be
 * an exact version fetched from an http(s) tarball URL with an integrity hash.
 */
export function npmLockfileProblem(lockfile: unknown): string | null {
  if (typeof lockfile !== "object" || lockfile === null || Array.isArray(lockfile))
    return "the lockfile is not an object";
  const { lockfileVersion, packages } = lockfile as Partial<NpmLockfile>;
  if (lockfileVersion !== 2 && lockfileVersion !== 3) return "the lockfile is not version 2 or 3";
  if (typeof packages !== "object" || packages === null || Array.isArray(packages))
    return "the lockfile has no packages";
  for (const [path, entry] of Object.entries(packages)) {
    if (path === "") continue;
    if (!ENTRY_PATH.test(path) || path.split("/").includes(".."))
      return `the lockfile entry ${JSON.stringify(path.slice(0, 200))} is not under node_modules`;
    if (typeof entry !== "object" || entry === null) return `the lockfile entry ${path} is not an object`;
    if (entry.link === true) return `the lockfile entry ${path} is a link`;
    if (typeof entry.version !== "string" || !EXACT_VERSION.test(entry.version))
      return `the lockfile entry ${path} has no exact version`;
    if (typeof entry.resolved !== "string" || !/^https?:\/\/[^\s]+$/.test(entry.resolved))
      return `the lockfile entry ${path} is not fetched from a registry URL`;
    if (typeof entry.integrity !== "string" || !INTEGRITY.test(entry.integrity))
      return `the lockfile entry ${path} has no integrity hash`;
  }
  return null;
}

/**
 * Why a stored or received resolution cannot be used (null when it can): its shape, its lockfile,
 * and its id, which must be the digest of its content.
 */
export function packageResolutionProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return "the resolution is not an object";
  const r = value as Partial<PackageResolution>;
  if (!isPackageResolutionId(r.id)) return "the resolution has no valid id";
  if (r.format !== 1) return `resolution ${r.id} has an unknown format`;
  if (!Array.isArray(r.unfrozen) || r.unfrozen.some((m) => typeof m !== "string"))
    return `resolution ${r.id} has no list of unfrozen managers`;
  if (r.npm !== null) {
    if (typeof r.npm !== "object" || r.npm === undefined) return `resolution ${r.id} has no npm part`;
    const problem = npmLockfileProblem(r.npm.lockfile);
    if (problem !== null) return `resolution ${r.id}: ${problem}`;
  }
  if (r.pip === undefined) return `resolution ${r.id} has no pip part`;
  if (r.pip !== null) {
    const lines = typeof r.pip === "object" ? r.pip?.requirements : undefined;
    if (
      !Array.isArray(lines) ||
      lines.length === 0 ||
      lines.some((l) => typeof l !== "string" || !PIP_LINE.test(l))
    )
      return `resolution ${r.id} has pip requirements that are not exact, hashed lines`;
  }
  const content: PackageResolutionContent = { format: 1, npm: r.npm, pip: r.pip, unfrozen: r.unfrozen };
  if (packageResolutionId(content) !== r.id) return `resolution ${r.id} does not match its content`;
  return null;
}

/** Whether `line` is one frozen pip requirement (`name==version --hash=sha256:<hex>`). */
export function isFrozenPipLine(line: string): boolean {
  return PIP_LINE.test(line);
}

/** The exact packages an npm lockfile pins, as `name@version` (for errors and docs). */
export function pinnedNpmPackages(lockfile: NpmLockfile): string[] {
  return Object.entries(lockfile.packages)
    .filter(([path]) => path !== "")
    .map(([path, entry]) => `${path.slice(path.lastIndexOf("node_modules/") + 13)}@${entry.version}`);
}
