/**
 * Host file operations on a session's mounted content. A writable mount (a read-write memory store)
 * is a directory the sandbox's uid owns and may fill with anything, links included, while the
 * worker that reads and refreshes it may be host root: so nothing here follows a link, and every
 * file opened is checked, through its descriptor, to really lie inside the mount (a directory
 * swapped for a link between the walk and the open is caught).
 *
 * A store is written and read file by file with synchronous calls on descriptors (each a few
 * microseconds; through the thread pool each cost a round trip of the event loop, ~1.7 ms a file),
 * in batches that yield to the event loop: at most `BATCH_FILES` files or `BATCH_MS` per batch, so
 * even a 10,000-file store blocks the loop for one batch at a time (about `BATCH_MS` plus one
 * file's calls; a disk that stalls one create stalls the loop that long).
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { open, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

/** Largest file read back from a writable mount (the memory store's own limit is far lower). */
export const MAX_MOUNT_FILE_BYTES = 16 * 1024 * 1024;
/** Most files one writable mount is read back with; past it the rest is reported, not read. */
export const MAX_MOUNT_FILES = 10_000;
/**
 * A batch of synchronous file calls ends after this many files or this long, whichever comes
 * first; the event loop then runs. The worst block is one batch: `BATCH_MS` plus one file's calls
 * (a file over `SYNC_READ_BYTES` is read asynchronously, so one file is at most that much I/O).
 */
const BATCH_FILES = 64;
const BATCH_MS = 5;
/** Directories nested deeper than this are removed by `rmSync` (which does not follow links either). */
const MAX_REMOVE_DEPTH = 64;
/** Files larger than this are read back through the thread pool rather than blocking the loop. */
const SYNC_READ_BYTES = 1024 * 1024;

export type MountFile =
  | { path: string; kind: "file"; bytes: Buffer; signature: FileSignature }
  /** Its signature is the one it was last read or written with: not read again. */
  | { path: string; kind: "unchanged" }
  | { path: string; kind: "unreadable"; reason: string };

/**
 * What changes whenever a file's content does: its inode, size and ctime (in ns). ctime is set by
 * the kernel on every write or metadata change and cannot be set back by the sandbox (unlike
 * mtime, which `touch -d` sets), so a matching signature means the content is the one known.
 */
export type FileSignature = string;

/**
 * How recent a ctime must not be for its signature to be trusted alone. The kernel stamps ctime from
 * a coarse clock (a tick of a few ms on ext4): a same-size write in the same tick as the moment a
 * signature was taken would leave it unchanged. A signature taken that soon after the file changed
 * is recorded as racy: it never matches by itself, so the file is read again (git's "racily clean"
 * rule), or, when a mount is brought to its snapshot, its content is checked against the hash.
 */
const RACY_NS = 100_000_000n;
const RACY = "~racy";

type StatLike = { ino: bigint; size: bigint; ctimeNs: bigint };

function signatureOf(info: StatLike): FileSignature {
  return `${info.ino}:${info.size}:${info.ctimeNs}`;
}

/** The signature to remember for a file just written or read (marked racy when it changed just now). */
function recordedSignatureOf(info: StatLike): FileSignature {
  const racy = BigInt(Date.now()) * 1_000_000n - info.ctimeNs < RACY_NS;
  return racy ? `${signatureOf(info)}${RACY}` : signatureOf(info);
}

/** Counts the files of a batch and yields to the event loop when the batch is full or long. */
class Batch {
  private files = 0;
  private started = performance.now();

  async next(): Promise<void> {
    this.files += 1;
    if (this.files < BATCH_FILES && performance.now() - this.started < BATCH_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.files = 0;
    this.started = performance.now();
  }
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return null;
  }
}

/** The signature of the regular file at `path` inside `root` (a link is not followed); null: none. */
export async function signatureAt(root: string, path: string): Promise<FileSignature | null> {
  const info = lstatOrNull(join(root, path));
  return info?.isFile() ? recordedSignatureOf(info) : null;
}

/**
 * A mount's root as the kernel names it: computed once per pass. The root itself is the worker's
 * (its parent is not in the sandbox), so only what lies under it can be swapped meanwhile.
 */
async function realRoot(root: string): Promise<string | null> {
  return realpath(root).catch(() => null);
}

/** Whether the open descriptor really lies under `base` (whatever links its path went through). */
function insideCheck(fd: number, base: string | null): boolean {
  if (base === null) return false;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${base}/`);
  } catch {
    return false;
  }
}

/**
 * Every regular file under `root`, by `/`-separated relative path. Links, devices, sockets and
 * FIFOs are reported unreadable, never followed or opened; so are files over the size limit. A file
 * whose signature is the one `known` holds for its path is reported `unchanged`, not read: a
 * write-back after every tool step then costs a stat per file, not a read and a hash.
 */
export async function readMountTree(
  root: string,
  known: ReadonlyMap<string, FileSignature> = new Map(),
): Promise<MountFile[]> {
  const base = await realRoot(root);
  const batch = new Batch();
  const files: MountFile[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = readdirSync(relative === "" ? root : join(root, relative), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (files.length >= MAX_MOUNT_FILES) {
        files.push({ path, kind: "unreadable", reason: `more than ${MAX_MOUNT_FILES} files` });
        return;
      }
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const was = known.get(path);
        const info = was === undefined ? null : lstatOrNull(join(root, path));
        files.push(
          info?.isFile() && signatureOf(info) === was
            ? { path, kind: "unchanged" }
            : await readOne(root, base, path),
        );
      } else files.push({ path, kind: "unreadable", reason: "not a regular file (links are not followed)" });
      await batch.next();
    }
  };
  await walk("");
  return files;
}

async function readOne(root: string, base: string | null, path: string): Promise<MountFile> {
  let fd: number;
  try {
    fd = openSync(join(root, path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { path, kind: "unreadable", reason: (error as NodeJS.ErrnoException).code ?? "cannot open" };
  }
  try {
    // Taken before the read: a write during the read changes the ctime, so it is read again next time.
    const info = fstatSync(fd, { bigint: true });
    if (!info.isFile()) return { path, kind: "unreadable", reason: "not a regular file" };
    if (!insideCheck(fd, base)) return { path, kind: "unreadable", reason: "outside the mount" };
    if (info.size > BigInt(MAX_MOUNT_FILE_BYTES))
      return { path, kind: "unreadable", reason: `larger than ${MAX_MOUNT_FILE_BYTES} bytes` };
    const bytes = info.size > BigInt(SYNC_READ_BYTES) ? await readLarge(fd) : readFileSync(fd);
    if (bytes.length > MAX_MOUNT_FILE_BYTES)
      return { path, kind: "unreadable", reason: `larger than ${MAX_MOUNT_FILE_BYTES} bytes` };
    return { path, kind: "file", bytes, signature: recordedSignatureOf(info) };
  } finally {
    closeSync(fd);
  }
}

/** A large file's bytes through the thread pool (the descriptor already checked; closed by the caller). */
async function readLarge(fd: number): Promise<Buffer> {
  // The descriptor's own path in /proc reopens the very file already opened, whatever its name now.
  const handle = await open(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Who a writable mount's files belong to: its directory's owner (the sandbox's uid). */
async function ownerOf(root: string): Promise<{ uid: number; gid: number } | null> {
  if (process.getuid?.() !== 0) return null;
  const info = await stat(root);
  return { uid: info.uid, gid: info.gid };
}

/** A file to write into a mount. */
export interface MountFileContent {
  path: string;
  content: Buffer | string;
}

/**
 * Writes each file at its path inside `root`, replacing what is there (a link is removed, never
 * followed), owned like `root`; the root's real path and owner are read once for the whole set.
 * Returns each written file's signature (taken on its descriptor once written). Parents are
 * created as directories; one that is not a directory refuses the write (throws).
 */
export async function writeMountFiles(
  root: string,
  files: readonly MountFileContent[],
  mode = 0o644,
): Promise<Map<string, FileSignature>> {
  const owner = await ownerOf(root);
  const base = await realRoot(root);
  const batch = new Batch();
  const signatures = new Map<string, FileSignature>();
  for (const file of files) {
    signatures.set(file.path, writeOne(root, base, owner, file.path, file.content, mode));
    await batch.next();
  }
  return signatures;
}

/** One file of `writeMountFiles`, in synchronous calls. */
function writeOne(
  root: string,
  base: string | null,
  owner: { uid: number; gid: number } | null,
  path: string,
  content: Buffer | string,
  mode: number,
): FileSignature {
  const segments = path.split("/");
  let dir = root;
  for (const segment of segments.slice(0, -1)) {
    dir = join(dir, segment);
    const info = lstatOrNull(dir);
    if (info === null) {
      mkdirSync(dir, { mode: 0o755 });
      if (owner) {
        const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
        try {
          fchownSync(fd, owner.uid, owner.gid);
        } finally {
          closeSync(fd);
        }
      }
    } else if (!info.isDirectory()) {
      throw new Error(`${segments.slice(0, -1).join("/")} is not a directory`);
    }
  }
  const target = join(root, path);
  const existing = lstatOrNull(target);
  if (existing?.isDirectory()) throw new Error(`${path} is a directory`);
  if (existing) unlinkSync(target);
  const fd = openSync(
    target,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    if (!insideCheck(fd, base)) {
      try {
        unlinkSync(target);
      } catch {}
      throw new Error(`${path} resolved outside the mount`);
    }
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
    return recordedSignatureOf(fstatSync(fd, { bigint: true }));
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes `content` at `path` inside `root`, replacing what is there (a link is removed, never
 * followed), owned like `root`. Parents are created as directories; one that is not a directory
 * refuses the write.
 */
export async function writeMountFile(
  root: string,
  path: string,
  content: Buffer | string,
  mode = 0o644,
): Promise<void> {
  await writeMountFiles(root, [{ path, content }], mode);
}

/** Removes `path` inside `root` (a link itself, never its target); absent is fine. */
export async function removeMountFile(root: string, path: string): Promise<void> {
  const target = join(root, path);
  const info = lstatOrNull(target);
  if (info === null) return;
  if (info.isDirectory()) await removeTree(target, new Batch());
  else unlinkSync(target);
}

/**
 * Removes the directory at `path` and all under it, never following a link: each directory is
 * opened with O_NOFOLLOW and its entries are named through its descriptor (`/proc/self/fd/N/name`),
 * so a directory swapped for a link meanwhile is not entered. Yields between batches.
 */
async function removeTree(path: string, batch: Batch, depth = 0): Promise<void> {
  // Each level holds its descriptor open: past this depth, the rest goes in one call (no link followed either).
  if (depth > MAX_REMOVE_DEPTH) return rmSync(path, { recursive: true, force: true });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return;
    // Not a directory (any more): a link or a file put there is removed itself.
    if (code === "ELOOP" || code === "ENOTDIR") return unlinkSync(path);
    throw error;
  }
  try {
    const here = `/proc/self/fd/${fd}`;
    for (const entry of readdirSync(here, { withFileTypes: true })) {
      const child = `${here}/${entry.name}`;
      if (entry.isDirectory()) await removeTree(child, batch, depth + 1);
      else {
        try {
          unlinkSync(child);
        } catch (error) {
          // Swapped for a directory meanwhile: removed as one.
          if ((error as NodeJS.ErrnoException).code === "EISDIR") await removeTree(child, batch, depth + 1);
          else if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        }
      }
      await batch.next();
    }
  } finally {
    closeSync(fd);
  }
  try {
    rmdirSync(path);
  } catch (error) {
    // Filled again meanwhile by a live sandbox: the rest goes in one call.
    if ((error as NodeJS.ErrnoException).code === "ENOTEMPTY") rmSync(path, { recursive: true, force: true });
    else if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** What a file of a mount was last known to hold: its signature then and the sha256 of its bytes. */
export interface KnownFile {
  signature: FileSignature;
  sha256: string;
}

/** A file a mount must hold, with the sha256 of its content (as UTF-8 when a string). */
export interface WantedFile extends MountFileContent {
  sha256: string;
}

/**
 * Makes `root` hold exactly `files` (creating it when absent), rewriting only what differs: a file
 * is kept when its signature is the one `known` holds for its path and `known`'s hash is the wanted
 * content's — the signature changes with any write, chmod, chown or replacement, so a kept file is
 * the one written or read then, owner and mode included. Everything else (a changed file, a link, a
 * directory no wanted path needs, a dead run's leftovers) is removed. The walk goes through each
 * directory's descriptor (`/proc/self/fd/N/name`), never a link. Returns what `root` now holds.
 */
export async function syncMountTree(
  root: string,
  files: readonly WantedFile[],
  known: ReadonlyMap<string, KnownFile>,
  mode: number,
  rootMode: number,
): Promise<Map<string, KnownFile>> {
  mkdirSync(root, { recursive: true, mode: rootMode });
  const wanted = new Map(files.map((file) => [file.path, file]));
  const dirs = new Set<string>();
  for (const file of files) {
    const segments = file.path.split("/");
    for (let i = 1; i < segments.length; i++) dirs.add(segments.slice(0, i).join("/"));
  }
  const owner = await ownerOf(root);
  const held = new Map<string, KnownFile>();
  const batch = new Batch();
  const prune = async (dir: string, relative: string): Promise<void> => {
    const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      const here = `/proc/self/fd/${fd}`;
      for (const entry of readdirSync(here, { withFileTypes: true })) {
        const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
        const child = `${here}/${entry.name}`;
        if (entry.isDirectory() && dirs.has(path)) await prune(child, path);
        else if (entry.isDirectory()) await removeTree(child, batch);
        else {
          const want = wanted.get(path);
          const was = known.get(path);
          const info = want && was && was.sha256 === want.sha256 ? lstatOrNull(child) : null;
          const kept =
            was &&
            info?.isFile() &&
            Number(info.mode & 0o777n) === mode &&
            (owner === null || (Number(info.uid) === owner.uid && Number(info.gid) === owner.gid))
              ? keptSignature(child, info, was)
              : null;
          if (was && kept !== null) held.set(path, { ...was, signature: kept });
          else unlinkAbsent(child);
        }
        await batch.next();
      }
    } finally {
      closeSync(fd);
    }
  };
  await prune(root, "");
  const rest = files.filter((file) => !held.has(file.path));
  const written = await writeMountFiles(root, rest, mode);
  for (const file of rest) {
    const signature = written.get(file.path);
    if (signature !== undefined) held.set(file.path, { signature, sha256: file.sha256 });
  }
  return held;
}

/**
 * The signature to keep for a file `known` says holds its content, or null when it may not: the
 * same signature as recorded; or, recorded racy, the same signature and content that still hashes
 * to what was written (read through a descriptor that follows no link, unchanged while read).
 */
function keptSignature(path: string, info: StatLike, was: KnownFile): FileSignature | null {
  const now = signatureOf(info);
  if (was.signature === now) return now;
  if (was.signature !== `${now}${RACY}`) return null;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const before = fstatSync(fd, { bigint: true });
    if (!before.isFile() || signatureOf(before) !== now) return null;
    const hash = createHash("sha256").update(readFileSync(fd)).digest("hex");
    const after = fstatSync(fd, { bigint: true });
    return hash === was.sha256 && signatureOf(after) === now ? recordedSignatureOf(after) : null;
  } finally {
    closeSync(fd);
  }
}

function unlinkAbsent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EISDIR") rmSync(path, { recursive: true, force: true });
    else if (code !== "ENOENT") throw error;
  }
}
