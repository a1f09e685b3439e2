/**
 * Host file operations on a session's mounted content. A writable mount (a read-write memory store)
 * is a directory the sandbox's uid owns and may fill with anything, links included, while the
 * worker that reads and refreshes it may be host root: so nothing here follows a link, and every
 * file opened is checked, through its descriptor, to really lie inside the mount (a directory
 * swapped for a link between the walk and the open is caught).
 */
import { constants } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rm,
  stat,
  unlink,
} from "node:fs/promises";
import { join } from "node:path";

/** Largest file read back from a writable mount (the memory store's own limit is far lower). */
export const MAX_MOUNT_FILE_BYTES = 16 * 1024 * 1024;
/** Most files one writable mount is read back with; past it the rest is reported, not read. */
export const MAX_MOUNT_FILES = 10_000;

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

function signatureOf(info: { ino: bigint; size: bigint; ctimeNs: bigint }): FileSignature {
  return `${info.ino}:${info.size}:${info.ctimeNs}`;
}

/** The signature of the regular file at `path` inside `root` (a link is not followed); null: none. */
export async function signatureAt(root: string, path: string): Promise<FileSignature | null> {
  const info = await lstat(join(root, path), { bigint: true }).catch(() => null);
  return info?.isFile() ? signatureOf(info) : null;
}

/** Whether the open file really lies under `root` (whatever links its path went through). */
async function insideCheck(handle: FileHandle, root: string): Promise<boolean> {
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
  const base = await realpath(root).catch(() => null);
  return real !== null && base !== null && real.startsWith(`${base}/`);
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
  const files: MountFile[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await readdir(relative === "" ? root : join(root, relative), { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (files.length >= MAX_MOUNT_FILES) {
        files.push({ path, kind: "unreadable", reason: `more than ${MAX_MOUNT_FILES} files` });
        return;
      }
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const was = known.get(path);
        files.push(
          was !== undefined && (await signatureAt(root, path)) === was
            ? { path, kind: "unchanged" }
            : await readOne(root, path),
        );
      } else files.push({ path, kind: "unreadable", reason: "not a regular file (links are not followed)" });
    }
  };
  await walk("");
  return files;
}

async function readOne(root: string, path: string): Promise<MountFile> {
  let handle: FileHandle;
  try {
    handle = await open(join(root, path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { path, kind: "unreadable", reason: (error as NodeJS.ErrnoException).code ?? "cannot open" };
  }
  try {
    // Taken before the read: a write during the read changes the ctime, so it is read again next time.
    const info = await handle.stat({ bigint: true });
    if (!info.isFile()) return { path, kind: "unreadable", reason: "not a regular file" };
    if (!(await insideCheck(handle, root))) return { path, kind: "unreadable", reason: "outside the mount" };
    if (info.size > BigInt(MAX_MOUNT_FILE_BYTES))
      return { path, kind: "unreadable", reason: `larger than ${MAX_MOUNT_FILE_BYTES} bytes` };
    const bytes = await handle.readFile();
    if (bytes.length > MAX_MOUNT_FILE_BYTES)
      return { path, kind: "unreadable", reason: `larger than ${MAX_MOUNT_FILE_BYTES} bytes` };
    return { path, kind: "file", bytes, signature: signatureOf(info) };
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
  const owner = await ownerOf(root);
  const segments = path.split("/");
  let dir = root;
  for (const segment of segments.slice(0, -1)) {
    dir = join(dir, segment);
    const info = await lstat(dir).catch(() => null);
    if (info === null) {
      await mkdir(dir, { mode: 0o755 });
      if (owner) {
        const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
        try {
          await handle.chown(owner.uid, owner.gid);
        } finally {
          await handle.close();
        }
      }
    } else if (!info.isDirectory()) {
      throw new Error(`${segments.slice(0, -1).join("/")} is not a directory`);
    }
  }
  const target = join(root, path);
  const existing = await lstat(target).catch(() => null);
  if (existing?.isDirectory()) throw new Error(`${path} is a directory`);
  if (existing) await unlink(target);
  const handle = await open(
    target,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    mode,
  );
  try {
    if (!(await insideCheck(handle, root))) {
      await unlink(target).catch(() => {});
      throw new Error(`${path} resolved outside the mount`);
    }
    if (owner) await handle.chown(owner.uid, owner.gid);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

/** Removes `path` inside `root` (a link itself, never its target); absent is fine. */
export async function removeMountFile(root: string, path: string): Promise<void> {
  const target = join(root, path);
  const info = await lstat(target).catch(() => null);
  if (info === null) return;
  if (info.isDirectory()) await rm(target, { recursive: true, force: true });
  else await unlink(target);
}

/** Empties `root` (creating it when absent) without following any link inside it. */
export async function emptyDirectory(root: string, mode: number): Promise<void> {
  await mkdir(root, { recursive: true, mode });
  for (const name of await readdir(root)) await rm(join(root, name), { recursive: true, force: true });
}
