import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PlatformError } from "../kernel/errors.js";
import { CHECKED_MANAGERS, packageRequirementProblem } from "../kernel/packageRequirements.js";
import {
  isFrozenPipLine,
  type NpmLockfile,
  npmLockfileProblem,
  type PackageResolution,
  packageResolution,
  packageResolutionProblem,
  pinnedNpmPackages,
} from "../kernel/packageResolution.js";
import { copyPreparedTree } from "./copyPreparedTree.js";
import { installerEnv } from "./installerEnv.js";
import { scrubInstallerOutput } from "./installerOutput.js";
import {
  type FrozenResolutionSource,
  type PackageLists,
  PREPARABLE_MANAGERS,
  type PreparedPackages,
} from "./ports.js";
import { runInstaller } from "./runInstaller.js";
import { HostUidPool, waitForNoProcesses } from "./sandboxUsers.js";

/** Where prepared package sets live under the worker's workspace root (never a session id: no dot). */
export const PACKAGES_DIR = ".packages";
/** Written last into a prepared set: a directory without it was never finished. */
export const READY_MARKER = ".ready";
const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** How long an installer's uid may take to have no process left before the set is copied. */
const UID_DRAIN_MS = 5_000;
/** The most of a package list quoted in an error. */
const SPECS_QUOTE_CHARS = 300;

const ALL_MANAGERS = ["apt", "cargo", "gem", "go", "npm", "pip"] as const;

/** Why a package set cannot be prepared (an unsupported manager, or the installer failed). */
export class PackagePreparationError extends PlatformError {
  constructor(
    readonly manager: string,
    message: string,
  ) {
    super("package_preparation_failed", message);
    this.name = "PackagePreparationError";
  }
}

export interface PackagePreparerOptions {
  /** The worker's workspace root; sets go to `<root>/.packages/<hash>/`. */
  root: string;
  /**
   * The worker's environment. Installers never get it whole: only registry, proxy and certificate
   * settings pass through (installerEnv.ts).
   */
  env: NodeJS.ProcessEnv;
  /** Per installer run. Default 10 minutes. */
  timeoutMs?: number;
  /**
   * Where the installers' unprivileged uids come from when the worker runs as root (default: the
   * sandboxes' host-wide range). Ignored when the worker is not root: installers then run as its user.
   */
  uids?: HostUidPool;
}

type InstallerUser = { uid: number; gid: number };

/** The six lists in canonical form (keys sorted, lists as given), hashed: the set's identity. */
export function packagesHash(packages: PackageLists): string {
  const canonical = JSON.stringify(Object.fromEntries(ALL_MANAGERS.map((m) => [m, packages[m] ?? []])));
  return createHash("sha256").update(canonical).digest("hex");
}

export function hasPackages(packages: PackageLists | undefined): packages is PackageLists {
  return packages !== undefined && ALL_MANAGERS.some((m) => (packages[m] ?? []).length > 0);
}

/**
 * Prepares an environment revision's packages once per exact content: installed into
 * `<root>/.packages/<sha256>/` (npm under `npm/`, pip under `pip/`) before any session uses them,
 * never into a live sandbox. Concurrent callers share one preparation. A set is built in a private
 * staging directory, `.ready` is written last, then it is renamed into place: a failed preparation
 * leaves nothing behind, and nothing is ever half-ready. Managers it cannot install into a sandbox
 * (apt, cargo, gem, go) are refused, never skipped.
 *
 * Nothing of a package runs on the host, and nothing a client wrote reaches an installer as anything
 * but a requirement: every npm and pip entry is checked against its grammar again here (a revision
 * stored before that rule must not slip through), and follows `--`. npm's install scripts stay off
 * (`--ignore-scripts`, and `npm_config_ignore_scripts=true`); pip takes wheels only
 * (`--only-binary=:all:`; an sdist's build would run its code). Installers run in a scratch
 * directory of their own, with a scrubbed environment, as an unprivileged uid when the worker is
 * root (so the data dir, 0700, is out of their reach); the worker copies what they wrote into the
 * set. Their output reaches an error only cut short and with host paths replaced.
 */
export class PackagePreparer {
  private readonly inflight = new Map<string, Promise<PreparedPackages>>();
  private pipChecked: Promise<boolean> | null = null;
  private readonly uids: HostUidPool | null;

  constructor(private readonly options: PackagePreparerOptions) {
    this.uids = process.getuid?.() === 0 ? (options.uids ?? new HostUidPool()) : null;
  }

  get root(): string {
    return join(this.options.root, PACKAGES_DIR);
  }

  /**
   * Prepares `packages`. With `frozen` and an npm list, the revision's frozen resolution is
   * installed exactly (`npm ci` from its lockfile): the recorded one, or, when none is recorded yet,
   * one resolved here (`npm install --package-lock-only`) and recorded first-writer-wins, so a
   * worker that loses the race installs the winner's. A recorded resolution that can no longer be
   * installed fails the preparation; it is never re-resolved.
   */
  async prepare(packages: PackageLists, frozen?: FrozenResolutionSource): Promise<PreparedPackages> {
    const resolution = frozen ? await this.freeze(packages, frozen) : null;
    if (resolution === null) return this.prepareKeyed(packages, packagesHash(packages), null);
    const key = createHash("sha256")
      .update(`${packagesHash(packages)}\n${resolution.id}`)
      .digest("hex");
    return this.prepareKeyed(packages, key, resolution);
  }

  /**
   * The revision's frozen resolution, made and recorded here when none is recorded yet, with
   * nothing installed: what a derived container image is built from (its packages live in the
   * image, not on this host). Null when there is no npm or pip list to freeze. Managers this host
   * cannot install are refused first, as `prepare` refuses them.
   */
  async freeze(packages: PackageLists, frozen: FrozenResolutionSource): Promise<PackageResolution | null> {
    this.refuseUnpreparable(packages);
    if ((packages.npm ?? []).length === 0 && (packages.pip ?? []).length === 0) return null;
    let resolution = await frozen.recorded();
    if (resolution === null) resolution = await frozen.record(await this.resolve(packages));
    const problem = packageResolutionProblem(resolution);
    if (problem !== null)
      throw new PackagePreparationError(
        "packages",
        `the frozen package resolution cannot be used: ${problem}`,
      );
    return resolution;
  }

  private prepareKeyed(
    packages: PackageLists,
    hash: string,
    resolution: PackageResolution | null,
  ): Promise<PreparedPackages> {
    const dir = join(this.root, hash);
    const prepared = { hash, dir, ...(resolution ? { resolutionId: resolution.id } : {}) };
    if (existsSync(join(dir, READY_MARKER))) return Promise.resolve(prepared);
    const existing = this.inflight.get(hash);
    if (existing) return existing;
    const started = this.build(packages, hash, dir, resolution)
      .then(() => prepared)
      .finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, started);
    return started;
  }

  private refuseUnpreparable(packages: PackageLists): void {
    for (const manager of ["apt", "cargo", "gem", "go"] as const) {
      const list = packages[manager] ?? [];
      if (list.length === 0) continue;
      throw new PackagePreparationError(
        manager,
        `config.packages.${manager} (${quote(list)}): ${manager} packages cannot be installed into ` +
          `sandboxes by this server (supported: ${PREPARABLE_MANAGERS.join(", ")}); bake them into the ` +
          `worker host or its image instead, and remove them from config.packages.${manager}`,
      );
    }
    for (const manager of CHECKED_MANAGERS) {
      const problem = packageRequirementProblem({ [manager]: packages[manager] });
      if (problem !== null) throw new PackagePreparationError(manager, problem);
    }
  }

  /** Runs `work` with an installer scratch directory and, when the worker is root, an unprivileged uid. */
  private async withInstaller<T>(work: (installer: InstallerScratch) => Promise<T>): Promise<T> {
    const uid = this.uids ? await this.uids.allocate() : null;
    const user = uid === null ? undefined : { uid, gid: uid };
    // The installers' own directory, outside the data dir: home, temp files, cwd and install targets.
    const scratch = await mkdtemp(join(tmpdir(), "awaken-prepare-"));
    try {
      const home = join(scratch, "home");
      const tmp = join(scratch, "tmp");
      const cwd = join(scratch, "work");
      for (const d of [home, tmp, cwd]) await mkdir(d, { mode: 0o700 });
      if (user) for (const d of [scratch, home, tmp, cwd]) await chown(d, user.uid, user.gid);
      const env = installerEnv(this.options.env, home, tmp);
      return await work({ scratch, cwd, env, user, hidden: this.hiddenPaths(scratch) });
    } finally {
      await rm(scratch, { recursive: true, force: true });
      // A uid with a process left is never handed out again (the pool skips busy uids).
      if (uid !== null && (await waitForNoProcesses(uid, UID_DRAIN_MS))) this.uids?.release(uid);
    }
  }

  /**
   * Resolves the lists once against the configured registries, installing nothing. npm: `npm
   * install --package-lock-only --ignore-scripts` writes a lockfile (exact versions, tarball URLs,
   * integrity). pip: `pip install --dry-run --report` names the exact wheel of every package and
   * its SHA-256; a pip that gives no hash leaves pip unfrozen (installed by range, as before).
   * What the installers wrote is checked as data before it becomes a resolution.
   */
  private resolve(packages: PackageLists): Promise<PackageResolution> {
    const npm = packages.npm ?? [];
    const pip = packages.pip ?? [];
    return this.withInstaller(async ({ scratch, cwd, env, user, hidden }) => {
      let npmPart: { lockfile: NpmLockfile } | null = null;
      if (npm.length > 0) {
        const project = await npmProject(scratch, npm, null, user);
        await this.install("npm", npm, hidden, {
          command: "npm",
          args: ["install", "--prefix", project, "--package-lock-only", ...NPM_FLAGS],
          env,
          cwd,
          user,
        });
        let lockfile: unknown;
        try {
          lockfile = JSON.parse(await readFile(join(project, "package-lock.json"), "utf8"));
        } catch {
          throw new PackagePreparationError(
            "npm",
            `config.packages.npm (${quote(npm)}): npm wrote no lockfile`,
          );
        }
        const problem = npmLockfileProblem(lockfile);
        if (problem !== null)
          throw new PackagePreparationError(
            "npm",
            `config.packages.npm (${quote(npm)}) cannot be frozen: ${problem}`,
          );
        npmPart = { lockfile: lockfile as NpmLockfile };
      }
      let pipPart: { requirements: string[] } | null = null;
      if (pip.length > 0) {
        if (!(await this.pipWorks(env, cwd, user))) throw this.pipMissing(pip, user);
        const report = join(cwd, "pip-report.json");
        const reported = this.install("pip", pip, hidden, {
          command: "python3",
          args: [
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--report",
            report,
            "--no-input",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "--",
            ...pip,
          ],
          env,
          cwd,
          user,
        });
        // A pip older than `--dry-run --report` (22.2) cannot freeze: pip stays unfrozen, as before.
        const tooOld = await reported.then(
          () => false,
          (error: unknown) => {
            if (error instanceof Error && /no such option: --(?:dry-run|report)/.test(error.message))
              return true;
            throw error;
          },
        );
        if (!tooOld) pipPart = frozenPipLines(await readFile(report, "utf8").catch(() => ""));
      }
      return packageResolution({
        format: 1,
        npm: npmPart,
        pip: pipPart,
        unfrozen: pip.length > 0 && pipPart === null ? ["pip"] : [],
      });
    });
  }

  private pipMissing(pip: readonly string[], user: InstallerUser | undefined): PackagePreparationError {
    return new PackagePreparationError(
      "pip",
      `config.packages.pip (${quote(pip)}): \`python3 -m pip\` does not run on this worker host` +
        `${user ? ` as an unprivileged user (uid ${user.uid})` : ""}; install python3 and pip there ` +
        "(world-readable, on the worker's PATH), or remove the pip packages",
    );
  }

  private async build(
    packages: PackageLists,
    hash: string,
    dir: string,
    resolution: PackageResolution | null,
  ): Promise<void> {
    this.refuseUnpreparable(packages);
    await this.withInstaller((installer) => this.buildAs(packages, hash, dir, resolution, installer));
  }

  private async buildAs(
    packages: PackageLists,
    hash: string,
    dir: string,
    resolution: PackageResolution | null,
    { scratch, cwd, env, user, hidden: scratchHidden }: InstallerScratch,
  ): Promise<void> {
    const npm = packages.npm ?? [];
    const pip = packages.pip ?? [];
    const staging = join(this.root, `.staging-${hash}-${process.pid}-${randomUUID()}`);
    try {
      const hidden: Array<[string, string]> = [[staging, "<staging>"], ...scratchHidden];

      if (pip.length > 0 && !(await this.pipWorks(env, cwd, user))) throw this.pipMissing(pip, user);
      if (npm.length > 0 && resolution?.npm) {
        // Exactly the frozen lockfile: `npm ci` never resolves, and fails on any integrity mismatch.
        const project = await npmProject(scratch, npm, resolution.npm.lockfile, user);
        await this.installFrozen(
          "npm",
          npm,
          resolution.id,
          pinnedNpmPackages(resolution.npm.lockfile),
          hidden,
          {
            command: "npm",
            args: ["ci", "--prefix", project, ...NPM_FLAGS],
            env,
            cwd,
            user,
          },
        );
      } else if (npm.length > 0) {
        await this.install("npm", npm, hidden, {
          command: "npm",
          args: ["install", "--prefix", join(scratch, "npm"), ...NPM_FLAGS, "--", ...npm],
          env,
          cwd,
          user,
        });
      }
      if (pip.length > 0 && resolution?.pip) {
        // Exactly the frozen lines: one wheel per package, its hash checked, no dependency resolved.
        const requirements = join(cwd, "frozen-requirements.txt");
        await writeFile(requirements, `${resolution.pip.requirements.join("\n")}\n`, { mode: 0o600 });
        if (user) await chown(requirements, user.uid, user.gid);
        const pinned = resolution.pip.requirements.map((line) => line.slice(0, line.indexOf(" ")));
        await this.installFrozen("pip", pip, resolution.id, pinned, hidden, {
          command: "python3",
          args: [
            "-m",
            "pip",
            "install",
            "--require-hashes",
            "--no-deps",
            "--target",
            join(scratch, "pip"),
            "--no-input",
            "--disable-pip-version-check",
            "--only-binary=:all:",
            "-r",
            requirements,
          ],
          env,
          cwd,
          user,
        });
      } else if (pip.length > 0) {
        await this.install("pip", pip, hidden, {
          command: "python3",
          args: [
            "-m",
            "pip",
            "install",
            "--target",
            join(scratch, "pip"),
            "--no-input",
            "--disable-pip-version-check",
            // Wheels only: building an sdist runs its code on the host, unsandboxed.
            "--only-binary=:all:",
            "--",
            ...pip,
          ],
          env,
          cwd,
          user,
        });
      }
      // Nothing of the installer's uid may still run while its files are copied.
      if (user && !(await waitForNoProcesses(user.uid, UID_DRAIN_MS))) {
        throw new PackagePreparationError("packages", "an installer left processes running; not copied");
      }

      await mkdir(this.root, { recursive: true, mode: 0o711 });
      await mkdir(staging, { mode: 0o755 });
      // Sandbox uids read it (bwrap binds it read-only): world-readable, owned by the worker.
      await chmod(staging, 0o755);
      for (const part of ["npm", "pip"] as const) {
        if (existsSync(join(scratch, part))) await copyPreparedTree(join(scratch, part), join(staging, part));
      }
      await writeFile(join(staging, READY_MARKER), `${new Date().toISOString()}\n`, { mode: 0o644 });
      try {
        await rename(staging, dir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
        // Another process finished the same set first, or an unfinished one is in the way.
        if (!existsSync(join(dir, READY_MARKER))) {
          await rm(dir, { recursive: true, force: true });
          await rename(staging, dir);
        }
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Host paths an installer's output may show, each with the placeholder a client sees instead. */
  private hiddenPaths(scratch: string): Array<[string, string]> {
    const hidden: Array<[string, string]> = [
      [scratch, "<scratch>"],
      [this.root, "<packages>"],
      [this.options.root, "<workspaces>"],
      [homedir(), "<home>"],
      [tmpdir(), "<tmp>"],
    ];
    // The workspaces' parent: the data dir of an all-in-one server, the worker's own dir otherwise.
    const parent = dirname(this.options.root);
    if (parent !== "/") hidden.push([parent, "<data-dir>"]);
    return hidden;
  }

  private async install(
    manager: string,
    specs: readonly string[],
    hidden: Array<[string, string]>,
    run: Omit<Parameters<typeof runInstaller>[0], "timeoutMs">,
  ): Promise<void> {
    const outcome = await runInstaller({ ...run, timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS });
    if (outcome.ok) return;
    const output = scrubInstallerOutput(outcome.stderr, hidden);
    const why = scrubInstallerOutput(outcome.why, hidden);
    throw new PackagePreparationError(
      manager,
      `config.packages.${manager} (${quote(specs)}) could not be installed: ${output ? `${why}: ${output}` : why}`,
    );
  }

  /**
   * `npm ci` or `pip install --require-hashes` of a frozen resolution. Its failure (the registry
   * lost a pinned version, an archive's hash does not match) names the resolution and the pinned packages npm complained of, and
   * is final: nothing is resolved again.
   */
  private async installFrozen(
    manager: "npm" | "pip",
    specs: readonly string[],
    resolutionId: string,
    pinned: readonly string[],
    hidden: Array<[string, string]>,
    run: Omit<Parameters<typeof runInstaller>[0], "timeoutMs">,
  ): Promise<void> {
    const outcome = await runInstaller({ ...run, timeoutMs: this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS });
    if (outcome.ok) return;
    const output = scrubInstallerOutput(outcome.stderr, hidden);
    const why = scrubInstallerOutput(outcome.why, hidden);
    const named = pinned.filter((p) => output.includes(p.split(/@(?=[^@]*$)|==/)[0]!));
    throw new PackagePreparationError(
      manager,
      `config.packages.${manager} (${quote(specs)}): the frozen package resolution ${resolutionId} ` +
        `(${quote(named.length > 0 ? named : pinned)}) can no longer be installed, and is not ` +
        `resolved again: ${output ? `${why}: ${output}` : why}`,
    );
  }

  private pipWorks(
    env: Record<string, string>,
    cwd: string,
    user: InstallerUser | undefined,
  ): Promise<boolean> {
    this.pipChecked ??= new Promise<boolean>((resolve) => {
      const child = spawn("python3", ["-m", "pip", "--version"], {
        env,
        cwd,
        stdio: "ignore",
        ...(user ?? {}),
      });
      child.once("error", () => resolve(false));
      child.once("exit", (code) => resolve(code === 0));
    });
    return this.pipChecked;
  }
}

/** A package list as quoted in an error: its entries, cut when long. */
function quote(list: readonly string[]): string {
  const joined = list.join(", ");
  return joined.length <= SPECS_QUOTE_CHARS ? joined : `${joined.slice(0, SPECS_QUOTE_CHARS)}…`;
}

/** npm's flags for every run: no audit, no funding notice, no install scripts. */
const NPM_FLAGS = ["--no-audit", "--no-fund", "--ignore-scripts"] as const;

/** The project name of a prepared npm set (never published). */
const PROJECT_NAME = "awaken-packages";

interface InstallerScratch {
  scratch: string;
  cwd: string;
  env: Record<string, string>;
  user: InstallerUser | undefined;
  hidden: Array<[string, string]>;
}

/**
 * The npm project a resolution is made or installed in (`<scratch>/npm`): a package.json whose
 * dependencies are the validated list (a bare name means its `latest` tag), and the frozen lockfile
 * when there is one. Both are written as data; nothing in them is ever a command line.
 */
async function npmProject(
  scratch: string,
  specs: readonly string[],
  lockfile: NpmLockfile | null,
  user: InstallerUser | undefined,
): Promise<string> {
  const project = join(scratch, "npm");
  await mkdir(project, { mode: 0o700 });
  const dependencies: Record<string, string> = {};
  for (const spec of specs) {
    const at = spec.indexOf("@", 1);
    dependencies[at === -1 ? spec : spec.slice(0, at)] = at === -1 ? "latest" : spec.slice(at + 1);
  }
  const files: Array<[string, unknown]> = [
    ["package.json", { name: PROJECT_NAME, version: "0.0.0", private: true, dependencies }],
  ];
  if (lockfile) files.push(["package-lock.json", lockfile]);
  for (const [name, content] of files)
    await writeFile(join(project, name), `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  if (user)
    for (const path of [project, ...files.map(([name]) => join(project, name))])
      await chown(path, user.uid, user.gid);
  return project;
}

/**
 * The frozen pip lines of a `pip install --dry-run --report` answer: each package's normalized
 * name, exact version and archive SHA-256. Null when the report is missing, or any package has no
 * SHA-256 or a name or version outside the grammar: pip then stays unfrozen.
 */
function frozenPipLines(reportText: string): { requirements: string[] } | null {
  let report: unknown;
  try {
    report = JSON.parse(reportText);
  } catch {
    return null;
  }
  const install = (report as { install?: unknown }).install;
  if (!Array.isArray(install) || install.length === 0) return null;
  const requirements: string[] = [];
  for (const item of install) {
    const name = String(field(item, "metadata", "name") ?? "")
      .toLowerCase()
      .replace(/[-_.]+/g, "-");
    const version = String(field(item, "metadata", "version") ?? "");
    const hashes = field(item, "download_info", "archive_info", "hashes", "sha256");
    const hash = field(item, "download_info", "archive_info", "hash");
    const sha256 =
      typeof hashes === "string"
        ? hashes
        : typeof hash === "string" && hash.startsWith("sha256=")
          ? hash.slice(7)
          : "";
    const line = `${name}==${version} --hash=sha256:${sha256}`;
    if (!isFrozenPipLine(line)) return null;
    requirements.push(line);
  }
  return { requirements: requirements.sort() };
}

/** A nested field of parsed JSON, or undefined. */
function field(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}
