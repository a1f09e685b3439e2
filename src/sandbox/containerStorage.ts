import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, normalize } from "node:path";

/**
 * A worker host's own podman image store (`awaken worker --container-storage <dir>`, or
 * `AWAKEN_CONTAINER_STORAGE` for any process that runs sessions): every podman command of the
 * container tier gets `--root <dir>/root --runroot <dir>/run --tmpdir <dir>/tmp`, so its images,
 * containers and podman's own state live there and nowhere else. Unset: podman's defaults.
 * Operator configuration only: never taken from a client.
 */
export interface ContainerStorage {
  dir: string;
  /** Images and layers (`--root`): kept across restarts. */
  root: string;
  /** Mount state (`--runroot`) and libpod's runtime files (`--tmpdir`): what a reboot empties. */
  runRoot: string;
  tmpDir: string;
}

/** Marks a directory as one of our stores; holds the boot id of the last start. */
const MARKER = "awaken-container-storage";
const BOOT_ID = "/proc/sys/kernel/random/boot_id";
/** podman refuses a longer `--runroot` (its sockets' paths must fit a unix socket address). */
const MAX_RUN_ROOT_BYTES = 50;

/** The store's paths under `dir` (nothing created: tests read a store a worker made). */
export function containerStorageLayout(dir: string): ContainerStorage {
  return { dir, root: join(dir, "root"), runRoot: join(dir, "run"), tmpDir: join(dir, "tmp") };
}

/** podman's global options for `storage`, placed before the subcommand; none for the default store. */
export function podmanStorageArgs(storage: ContainerStorage | undefined): string[] {
  if (storage === undefined) return [];
  return ["--root", storage.root, "--runroot", storage.runRoot, "--tmpdir", storage.tmpDir];
}

/**
 * Checks and prepares the store at `dir` (`spelled`: the flag or variable it came from, for the
 * error): an absolute path, not `/`, short enough for podman (46 bytes); created 0700 when
 * missing; otherwise a directory owned by this process's user that is empty or already a store of
 * ours (it empties `run/` and `tmp/` below, so it must not hold anything else), tightened to 0700. After a reboot `run/` and
 * `tmp/` are emptied, as podman expects of its defaults on tmpfs: stale mount counts and container
 * states would otherwise outlive the boot. Throws a message naming `spelled`.
 */
export function openContainerStorage(
  dir: string,
  spelled: string,
  bootId: () => string = () => readFileSync(BOOT_ID, "utf8").trim(),
): ContainerStorage {
  const problem = (why: string) => new Error(`${spelled} ${why} (got ${JSON.stringify(dir)})`);
  if (dir === "" || !isAbsolute(dir)) throw problem("must be an absolute path");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(dir)) throw problem("must not contain control characters");
  const path = normalize(dir).replace(/(.)\/+$/, "$1");
  if (path === "/") throw problem("must be a directory of its own, not /");
  if (Buffer.byteLength(containerStorageLayout(path).runRoot) > MAX_RUN_ROOT_BYTES)
    throw problem(
      `must be at most ${MAX_RUN_ROOT_BYTES - "/run".length} bytes long: podman refuses a run directory (<dir>/run) longer than ${MAX_RUN_ROOT_BYTES}`,
    );
  let created = false;
  try {
    statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      throw problem(`cannot be read: ${(error as Error).message}`);
    mkdirSync(path, { recursive: true, mode: 0o700 });
    created = true;
  }
  const stat = statSync(path);
  if (!stat.isDirectory()) throw problem("is not a directory");
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw problem(`must be owned by this process's user (uid ${uid})`);
  const marker = join(path, MARKER);
  if (!created) {
    const names = readdirSync(path);
    if (names.length > 0 && !names.includes(MARKER))
      throw problem("is neither empty nor a container store this product made: name a directory of its own");
    if ((stat.mode & 0o077) !== 0) chmodSync(path, 0o700);
  }
  const storage = containerStorageLayout(path);
  const boot = bootId();
  let lastBoot: string | null = null;
  try {
    lastBoot = readFileSync(marker, "utf8").trim();
  } catch {
    // A new store.
  }
  if (lastBoot !== boot) {
    rmSync(storage.runRoot, { recursive: true, force: true });
    rmSync(storage.tmpDir, { recursive: true, force: true });
  }
  for (const sub of [storage.root, storage.runRoot, storage.tmpDir])
    mkdirSync(sub, { recursive: true, mode: 0o700 });
  if (lastBoot !== boot) writeFileSync(marker, `${boot}\n`, { mode: 0o600 });
  return storage;
}

/**
 * The store this process's container tier uses: `flag` (`--container-storage`) when given, else
 * `AWAKEN_CONTAINER_STORAGE`, else none (podman's default store).
 */
export function containerStorageFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): ContainerStorage | undefined {
  if (flag !== undefined) return openContainerStorage(flag, "--container-storage");
  const fromEnv = env.AWAKEN_CONTAINER_STORAGE;
  if (fromEnv === undefined || fromEnv === "") return undefined;
  return openContainerStorage(fromEnv, "AWAKEN_CONTAINER_STORAGE");
}
