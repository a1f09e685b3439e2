import type { BlobDigest, BlobStore } from "../../resources/ports.js";
import type { Db } from "./db.js";

/** Blobs in the database: what every replica and remote worker of a PostgreSQL deployment reaches. */
export class SqlBlobStore implements BlobStore {
  constructor(protected readonly db: Db) {}

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
