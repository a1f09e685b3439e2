import type { BlobDigest, BlobStore } from "../ports.js";

/** Blobs as files of a content-addressed directory: the all-in-one server's store. */
export class LocalBlobStore implements BlobStore {
  constructor(protected readonly dir: string) {}

  put(_bytes: Uint8Array): Promise<{ digest: BlobDigest; size: number }> {
    throw new Error("not implemented");
  }
  get(_digest: BlobDigest): Promise<Buffer | null> {
    throw new Error("not implemented");
  }
  has(_digest: BlobDigest): Promise<boolean> {
    throw new Error("not implemented");
  }
  delete(_digest: BlobDigest): Promise<void> {
    throw new Error("not implemented");
  }
}
