/**
 * The package requirement grammars an environment's `config.packages` lists must follow before any
 * entry reaches an installer on the host: a registry name with an optional version, nothing else.
 * No option (`-…`), path, URL, VCS, `file:`, tarball, alias (`npm:`) or requirements-file form gets
 * through, so an entry can only ever name a package to fetch from the configured registry.
 *
 * Checked at environment create/update and again by the package preparer before it spawns anything
 * (a revision stored before these rules must not slip through).
 */

/** The managers whose lists have a grammar here (the others are never installed by the server). */
export const CHECKED_MANAGERS = ["npm", "pip"] as const;
export type CheckedManager = (typeof CHECKED_MANAGERS)[number];

const EXPECTED: Record<CheckedManager, string> = {
  npm: "expected name or name@version-range, e.g. lodash or @types/node@^24",
  pip: "expected name, name[extras] or name with a version specifier, e.g. requests>=2.31,<3",
};

/** npm treats a spec ending like an archive as a local file; pip does the same (it warns, then tries). */
const ARCHIVE_SUFFIX = /\.(?:whl|zip|tgz|tar|tbz|txz|tlz|tar\.gz|tar\.bz2|tar\.xz|tar\.lz|tar\.lzma)$/i;

// npm: https://docs.npmjs.com/cli/configuring-npm/package-json#name — URL-safe, at most 214
// characters, no leading dot or underscore; scoped names are lowercase, legacy unscoped names may
// have capitals. A leading `-` or `~` (npm would take it for an option or a home path) is refused.
const NPM_SEGMENT = "[a-z0-9][a-z0-9._~-]*";
const NPM_NAME = new RegExp(`^(?:@${NPM_SEGMENT}/${NPM_SEGMENT}|[A-Za-z0-9][A-Za-z0-9._~-]*)$`);
const NPM_NAME_MAX = 214;
const NPM_RESERVED = new Set(["node_modules", "favicon.ico"]);

// node-semver's range grammar (its README's BNF), with optional blanks after an operator.
const NR = "(?:0|[1-9][0-9]*)";
const XR = `(?:[xX*]|${NR})`;
const PART = "(?:[0-9A-Za-z-]+)";
const PARTS = `${PART}(?:\\.${PART})*`;
const QUALIFIER = `(?:-${PARTS})?(?:\\+${PARTS})?`;
const PARTIAL = `v?${XR}(?:\\.${XR}(?:\\.${XR}${QUALIFIER})?)?`;
const SIMPLE = `(?:(?:<=|>=|<|>|=|~|\\^)[ \\t]*)?${PARTIAL}`;
const RANGE = `(?:${PARTIAL} - ${PARTIAL}|${SIMPLE}(?: +${SIMPLE})*)`;
const SEMVER_RANGE = new RegExp(`^${RANGE}(?: *\\|\\| *${RANGE})*$`);
/** A dist-tag (`latest`, `next`, `beta`): npm takes any non-range that encodes to itself. */
const NPM_TAG = /^[A-Za-z][A-Za-z0-9._-]{0,127}$/;

// pip: PEP 508 names and extras, PEP 440 versions (packaging's VERSION_PATTERN), no URL, no marker.
// Blanks are spaces and tabs only: no entry spans lines.
const PEP508_NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
const PEP440_RELEASE = "(?:[0-9]+!)?[0-9]+(?:\\.[0-9]+)*";
const PEP440_SUFFIX =
  "(?:[-_.]?(?:alpha|a|beta|b|preview|pre|c|rc)[-_.]?[0-9]*)?" +
  "(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?" +
  "(?:[-_.]?dev[-_.]?[0-9]*)?" +
  "(?:\\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?";
const PEP440_VERSION = `v?${PEP440_RELEASE}${PEP440_SUFFIX}`;
const PEP440_CLAUSE =
  `(?:(?:==|!=)[ \\t]*v?${PEP440_RELEASE}\\.\\*` +
  `|(?:~=|==|!=|<=|>=|<|>)[ \\t]*${PEP440_VERSION}` +
  "|===[ \\t]*[A-Za-z0-9._+!-]+)";
const PEP440_SPECIFIER = `${PEP440_CLAUSE}(?:[ \\t]*,[ \\t]*${PEP440_CLAUSE})*`;
const PIP_REQUIREMENT = new RegExp(
  `^${PEP508_NAME}` +
    `(?:[ \\t]*\\[[ \\t]*(?:${PEP508_NAME}(?:[ \\t]*,[ \\t]*${PEP508_NAME})*)?[ \\t]*\\])?` +
    `(?:[ \\t]*(?:${PEP440_SPECIFIER}|\\([ \\t]*${PEP440_SPECIFIER}[ \\t]*\\)))?$`,
  "i",
);

function isNpmRequirement(entry: string): boolean {
  if (ARCHIVE_SUFFIX.test(entry)) return false;
  // The version part starts at the first `@` after the name (a scoped name begins with one).
  const at = entry.indexOf("@", 1);
  const name = at === -1 ? entry : entry.slice(0, at);
  if (name.length > NPM_NAME_MAX || NPM_RESERVED.has(name.toLowerCase()) || !NPM_NAME.test(name)) {
    return false;
  }
  if (at === -1) return true;
  const version = entry.slice(at + 1);
  return SEMVER_RANGE.test(version) || NPM_TAG.test(version);
}

function isPipRequirement(entry: string): boolean {
  return !ARCHIVE_SUFFIX.test(entry) && PIP_REQUIREMENT.test(entry);
}

/** Whether `entry` is a plain registry requirement in `manager`'s grammar. */
export function isPackageRequirement(manager: CheckedManager, entry: string): boolean {
  return manager === "npm" ? isNpmRequirement(entry) : isPipRequirement(entry);
}

/**
 * The first entry of `packages` (npm and pip lists) outside its grammar, as a message naming it
 * (`config.packages.npm[2]: "/x.tgz" is not a package requirement (expected …)`); null when all are
 * requirements.
 */
export function packageRequirementProblem(packages: {
  readonly npm?: readonly string[] | null;
  readonly pip?: readonly string[] | null;
}): string | null {
  for (const manager of CHECKED_MANAGERS) {
    const list = packages[manager] ?? [];
    for (const [index, entry] of list.entries()) {
      if (typeof entry === "string" && isPackageRequirement(manager, entry)) continue;
      return (
        `config.packages.${manager}[${index}]: ${JSON.stringify(entry)} is not a package requirement ` +
        `(${EXPECTED[manager]}); options, paths, URLs, VCS and local files are not accepted`
      );
    }
  }
  return null;
}
