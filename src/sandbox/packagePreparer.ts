import { spawn } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type PackageLists, PREPARABLE_MANAGERS, type PreparedPackages } from "./ports.js";

/** Where prepared package sets live under the worker's workspace root (never a session id: no dot). */
export const PACKAGES_DIR = ".packages";
/** Written last into a prepared set: a directory without it was never finished. */
export const READY_MARKER = ".ready";
const STDERR_TAIL_CHARS = 2_000;
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

const ALL_MANAGERS = ["apt", "cargo", "gem", "go", "npm", "pip"] as const;

/** Why a package set cannot be prepared (an unsupported manager, or the installer failed). */
export class PackagePreparationError extends Error {
  constructor(
    readonly manager: string,
    message: string,
  ) {
    super(message);
    this.name = "PackagePreparationError";
  }
}

export interface PackagePreparerOptions {
  /** The worker's workspace root; sets go to `<root>/.packages/<hash>/`. */
  root: string;
  /** The installers' environment: the worker's own (registry settings pass through). */
  env: NodeJS.ProcessEnv;
  /** Per installer run. Default 10 minutes. */
  timeoutMs?: number;
}

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
 * Nothing of a package runs on the host: npm's install scripts stay off (`--ignore-scripts`) and
 * pip takes wheels only (`--only-binary=:all:`; an sdist's build would run its code).
 */
export class PackagePreparer {
  private readonly inflight = new Map<string, Promise<PreparedPackages>>();
  private pipChecked: Promise<boolean> | null = null;

  constructor(private readonly options: PackagePreparerOptions) {}

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
        `config.packages.${manager} (${list.join(", ")}): ${manager} packages cannot be installed into ` +
          `sandboxes by this server (supported: ${PREPARABLE_MANAGERS.join(", ")}); bake them into the ` +
          `worker host or its image instead, and remove them from config.packages.${manager}`,
      );
    }
    const pip = packages.pip ?? [];
    if (pip.length > 0 && !(await this.pipWorks())) {
      throw new PackagePreparationError(
        "pip",
        `config.packages.pip (${pip.join(", ")}): \`python3 -m pip\` does not run on this worker host; ` +
          "install python3 and pip there, or remove the pip packages",
      );
    }
    await mkdir(this.root, { recursive: true, mode: 0o711 });
    const staging = join(this.root, `.staging-${hash}-${process.pid}-${randomUUID()}`);
    try {
      await mkdir(staging, { mode: 0o755 });
      // Sandbox uids read it (bwrap binds it read-only): world-readable, owned by the worker.
      await chmod(staging, 0o755);
      const npm = packages.npm ?? [];
      if (npm.length > 0) {
        await this.run("npm", npm, "npm", [
          "install",
          "--prefix",
          join(staging, "npm"),
          "--no-audit",
          "--no-fund",
          "--ignore-scripts",
          ...npm,
        ]);
      }
      if (pip.length > 0) {
        await this.run("pip", pip, "python3", [
          "-m",
          "pip",
          "install",
          "--target",
          join(staging, "pip"),
          "--no-input",
          "--disable-pip-version-check",
          // Wheels only: building an sdist runs its code on the host, unsandboxed.
          "--only-binary=:all:",
          ...pip,
        ]);
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
    }
  }

  private pipWorks(): Promise<boolean> {
    this.pipChecked ??= new Promise<boolean>((resolve) => {
      const child = spawn("python3", ["-m", "pip", "--version"], {
        env: this.options.env,
        stdio: "ignore",
      });
      child.once("error", () => resolve(false));
      child.once("exit", (code) => resolve(code === 0));
    });
    return this.pipChecked;
  }

  private run(manager: string, specs: readonly string[], command: string, args: string[]): Promise<void> {
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<void>((resolve, reject) => {
      let tail = "";
      const keep = (chunk: Buffer) => {
        tail = (tail + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
      };
      const child = spawn(command, args, {
        env: this.options.env,
        cwd: this.root,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      child.stdout?.on("data", () => {});
      child.stderr?.on("data", keep);
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        if (child.pid !== undefined) {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // Already gone.
          }
        }
      }, timeoutMs);
      const fail = (detail: string) =>
        new PackagePreparationError(
          manager,
          `config.packages.${manager} (${specs.join(", ")}) could not be installed: ${detail}`,
        );
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(fail(`${command} could not be started: ${error.message}`));
      });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        if (code === 0) return resolve();
        const why = timedOut
          ? `${command} did not finish within ${timeoutMs} ms`
          : `${command} exited with ${code ?? signal}`;
        const detail = tail.trim();
        reject(fail(detail ? `${why}: ${detail}` : why));
      });
    });
  }
}
