import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { BlobDigest, BlobStore } from "../ports.js";
import { BlobCorruptedError, checkBlobDigest, digestOf } from "./blobDigest.js";

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * Blobs as files of a content-addressed directory (`<dir>/sha256/ab/cdef…`): the all-in-one
 * server's store. Only a checked digest ever becomes a path; a write is a private temp file,
 * fsynced and renamed into place (a reader sees all the bytes or none); a read re-hashes the bytes
 * so corruption on disk is an error, never wrong bytes.
 */
export class LocalBlobStore implements BlobStore {
  constructor(protected readonly dir: string) {}

  async put(bytes: Uint8Array): Promise<{ digest: BlobDigest; size: number }> {
    const digest = digestOf(bytes);
    const path = this.pathOf(digest);
    // Already stored (same digest, same size): the same bytes, nothing to write.
    if ((await sizeOf(path)) === bytes.length) return { digest, size: bytes.length };
    await mkdir(dirname(path), { recursive: true, mode: DIR_MODE });
    const temp = `${path}.${randomBytes(8).toString("hex")}.tmp`;
    try {
      const handle = await open(temp, "wx", FILE_MODE);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      // Concurrent puts of the same bytes each rename their own complete copy: the last one wins.
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncDir(dirname(path));
    return { digest, size: bytes.length };
  }

  async get(digest: BlobDigest): Promise<Buffer | null> {
    const path = this.pathOf(digest);
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
    if (digestOf(bytes) !== digest) throw new BlobCorruptedError(digest);
    return bytes;
  }

  async has(digest: BlobDigest): Promise<boolean> {
    return (await sizeOf(this.pathOf(digest))) !== null;
  }

  async delete(digest: BlobDigest): Promise<void> {
    await rm(this.pathOf(digest), { force: true });
  }

  /** The file of a digest; the digest is checked first, so no client string becomes a path. */
  private pathOf(digest: BlobDigest): string {
    const hex = checkBlobDigest(digest).slice("sha256:".length);
    return join(this.dir, "sha256", hex.slice(0, 2), hex.slice(2));
  }
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Makes the rename durable: the directory entry is flushed as well as the file. */
async function syncDir(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
