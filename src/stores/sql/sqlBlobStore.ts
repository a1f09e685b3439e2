import { type Clock, systemClock } from "../../kernel/clock.js";
import { BlobCorruptedError, checkBlobDigest, digestOf } from "../../resources/blobs/blobDigest.js";
import type { BlobDigest, BlobStore } from "../../resources/ports.js";
import type { Db } from "./db.js";

/**
 * Blobs in the database: what every replica and remote worker of a PostgreSQL deployment reaches.
 * A row is written once (`on conflict do nothing`), so concurrent puts of the same bytes are one
 * blob and neither fails.
 */
export class SqlBlobStore implements BlobStore {
  constructor(
    protected readonly db: Db,
    private readonly clock: Clock = systemClock,
  ) {}

  async put(bytes: Uint8Array): Promise<{ digest: BlobDigest; size: number }> {
    const digest = digestOf(bytes);
    await this.db
      .insertInto("blobs")
      .values({ digest, size: bytes.length, bytes: Buffer.from(bytes), created_at: this.clock.now() })
      .onConflict((oc) => oc.column("digest").doNothing())
      .execute();
    return { digest, size: bytes.length };
  }

  async get(digest: BlobDigest): Promise<Buffer | null> {
    checkBlobDigest(digest);
    const row = await this.db
      .selectFrom("blobs")
      .select("bytes")
      .where("digest", "=", digest)
      .executeTakeFirst();
    if (!row) return null;
    const bytes = Buffer.from(row.bytes);
    if (digestOf(bytes) !== digest) throw new BlobCorruptedError(digest);
    return bytes;
  }

  async has(digest: BlobDigest): Promise<boolean> {
    checkBlobDigest(digest);
    const row = await this.db
      .selectFrom("blobs")
      .select("digest")
      .where("digest", "=", digest)
      .executeTakeFirst();
    return row !== undefined;
  }

  async delete(digest: BlobDigest): Promise<void> {
    checkBlobDigest(digest);
    await this.db.deleteFrom("blobs").where("digest", "=", digest).execute();
  }
}
