import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PlatformError } from "../kernel/errors.js";
import { CHECKED_MANAGERS, packageRequirementProblem } from "../kernel/packageRequirements.js";
import { copyPreparedTree } from "./copyPreparedTree.js";
import { installerEnv } from "./installerEnv.js";
import { scrubInstallerOutput } from "./installerOutput.js";
import { type PackageLists, PREPARABLE_MANAGERS, type PreparedPackages } from "./ports.js";
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

  prepare(packages: PackageLists): Promise<PreparedPackages> {
    const hash = packagesHash(packages);
    const dir = join(this.root, hash);
    if (existsSync(join(dir, READY_MARKER))) return Promise.resolve({ hash, dir });
    const existing = this.inflight.get(hash);
    if (existing) return existing;
    const started = this.build(packages, hash, dir).finally(() => this.inflight.delete(hash));
    this.inflight.set(hash, started);
    return started;
  }

  private async build(packages: PackageLists, hash: string, dir: string): Promise<PreparedPackages> {
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
    const user = this.uids ? await this.uids.allocate() : null;
    const runAs = user === null ? undefined : { uid: user, gid: user };
    try {
      return await this.buildAs(packages, hash, dir, runAs);
    } finally {
      // A uid with a process left is never handed out again (the pool skips busy uids).
      if (user !== null && (await waitForNoProcesses(user, UID_DRAIN_MS))) this.uids?.release(user);
    }
  }

  private async buildAs(
    packages: PackageLists,
    hash: string,
    dir: string,
    user: InstallerUser | undefined,
  ): Promise<PreparedPackages> {
    const npm = packages.npm ?? [];
    const pip = packages.pip ?? [];
    // The installers' own directory, outside the data dir: home, temp files, cwd and install targets.
    const scratch = await mkdtemp(join(tmpdir(), "awaken-prepare-"));
    const staging = join(this.root, `.staging-${hash}-${process.pid}-${randomUUID()}`);
    try {
      const home = join(scratch, "home");
      const tmp = join(scratch, "tmp");
      const cwd = join(scratch, "work");
      for (const d of [home, tmp, cwd]) await mkdir(d, { mode: 0o700 });
      if (user) for (const d of [scratch, home, tmp, cwd]) await chown(d, user.uid, user.gid);
      const env = installerEnv(this.options.env, home, tmp);
      const hidden = this.hiddenPaths(scratch, staging);

      if (pip.length > 0 && !(await this.pipWorks(env, cwd, user))) {
        throw new PackagePreparationError(
          "pip",
          `config.packages.pip (${quote(pip)}): \`python3 -m pip\` does not run on this worker host` +
            `${user ? ` as an unprivileged user (uid ${user.uid})` : ""}; install python3 and pip there ` +
            "(world-readable, on the worker's PATH), or remove the pip packages",
        );
      }
      if (npm.length > 0) {
        await this.install("npm", npm, hidden, {
          command: "npm",
          args: [
            "install",
            "--prefix",
            join(scratch, "npm"),
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--",
            ...npm,
          ],
          env,
          cwd,
          user,
        });
      }
      if (pip.length > 0) {
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
      return { hash, dir };
    } finally {
      await rm(staging, { recursive: true, force: true });
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** Host paths an installer's output may show, each with the placeholder a client sees instead. */
  private hiddenPaths(scratch: string, staging: string): Array<[string, string]> {
    const hidden: Array<[string, string]> = [
      [scratch, "<scratch>"],
      [staging, "<staging>"],
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
