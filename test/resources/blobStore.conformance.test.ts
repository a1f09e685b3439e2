import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BlobCorruptedError, digestOf } from "../../src/resources/blobs/blobDigest.js";
import { LocalBlobStore } from "../../src/resources/blobs/localBlobStore.js";
import type { BlobStore } from "../../src/resources/ports.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlBlobStore } from "../../src/stores/sql/sqlBlobStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres } from "../support/postgresFixtures.js";

// One suite for every `BlobStore` backend: the directory of the all-in-one server, and the
// database table on SQLite and on the real PostgreSQL server (a fresh schema, dropped after).

interface Fixture {
  store: BlobStore;
  /** A second store on the same bytes (another pool on PostgreSQL): concurrent writers. */
  other: BlobStore;
  /** Overwrites the stored bytes of `digest` behind the store's back. */
  corrupt(digest: string, bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

const BACKENDS: Record<string, () => Promise<Fixture>> = {
  Local: async () => {
    const home = mkdtempSync(join(tmpdir(), "awaken-blobs-"));
    const dir = join(home, "blobs");
    return {
      store: new LocalBlobStore(dir),
      other: new LocalBlobStore(dir),
      corrupt: async (digest, bytes) => {
        const hex = digest.slice("sha256:".length);
        writeFileSync(join(dir, "sha256", hex.slice(0, 2), hex.slice(2)), bytes);
      },
      close: async () => rmSync(home, { recursive: true, force: true }),
    };
  },
  "SQL on SQLite": async () => {
    const handle = await openSqlite(":memory:");
    return {
      store: new SqlBlobStore(handle.db),
      other: new SqlBlobStore(handle.db),
      corrupt: (digest, bytes) => corruptRow(handle.db, digest, bytes),
      close: () => handle.close(),
    };
  },
  "SQL on PostgreSQL": async () => {
    const pg = await openTestPostgres();
    const replica = await pg.openReplica();
    return {
      store: new SqlBlobStore(pg.handle.db),
      other: new SqlBlobStore(replica.db),
      corrupt: (digest, bytes) => corruptRow(pg.handle.db, digest, bytes),
      close: () => pg.dispose(),
    };
  },
};

async function corruptRow(db: Db, digest: string, bytes: Uint8Array): Promise<void> {
  await db
    .updateTable("blobs")
    .set({ bytes: Buffer.from(bytes) })
    .where("digest", "=", digest)
    .execute();
}

const HOSTILE_DIGESTS = [
  "../../etc/passwd",
  "sha256:../../../etc/passwd",
  `sha256:${"A".repeat(64)}`,
  `sha256:${"a".repeat(63)}`,
  `sha256:${"a".repeat(63)}\0`,
  `sha256:${"a".repeat(64)}/..`,
  `sha512:${"a".repeat(64)}`,
  "",
];

describe.each(Object.keys(BACKENDS))("BlobStore conformance: %s", (backend) => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await BACKENDS[backend]!();
  });
  afterEach(async () => {
    await fx.close();
  });

  it("round-trips bytes under their sha256 digest", async () => {
    const bytes = randomBytes(1000);
    const put = await fx.store.put(bytes);
    expect(put).toEqual({ digest: digestOf(bytes), size: 1000 });
    expect(put.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await fx.store.has(put.digest)).toBe(true);
    expect((await fx.store.get(put.digest))?.equals(bytes)).toBe(true);
    expect((await fx.other.get(put.digest))?.equals(bytes)).toBe(true);
  });

  it("put is idempotent", async () => {
    const bytes = Buffer.from("same bytes twice");
    const first = await fx.store.put(bytes);
    const second = await fx.store.put(bytes);
    expect(second).toEqual(first);
    expect((await fx.store.get(first.digest))?.toString()).toBe("same bytes twice");
  });

  it("stores empty bytes", async () => {
    const put = await fx.store.put(new Uint8Array(0));
    expect(put.size).toBe(0);
    expect((await fx.store.get(put.digest))?.length).toBe(0);
  });

  it("stores 8 MiB", async () => {
    const bytes = randomBytes(8 * 1024 * 1024);
    const put = await fx.store.put(bytes);
    expect(put.size).toBe(bytes.length);
    expect((await fx.store.get(put.digest))?.equals(bytes)).toBe(true);
  });

  it("concurrent puts of the same bytes are one blob and none fails", async () => {
    const bytes = randomBytes(256 * 1024);
    const puts = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? fx.store : fx.other).put(bytes)),
    );
    expect(new Set(puts.map((p) => p.digest)).size).toBe(1);
    expect((await fx.store.get(digestOf(bytes)))?.equals(bytes)).toBe(true);
  });

  it("a missing blob is null, not an error", async () => {
    const missing = digestOf(Buffer.from("never stored"));
    expect(await fx.store.get(missing)).toBeNull();
    expect(await fx.store.has(missing)).toBe(false);
  });

  it.each(HOSTILE_DIGESTS)("refuses the malformed digest %j on get, has and delete", async (digest) => {
    await expect(fx.store.get(digest)).rejects.toThrow(/not a blob digest/);
    await expect(fx.store.has(digest)).rejects.toThrow(/not a blob digest/);
    await expect(fx.store.delete(digest)).rejects.toThrow(/not a blob digest/);
  });

  it("deletes; deleting a missing blob is fine", async () => {
    const put = await fx.store.put(Buffer.from("to delete"));
    await fx.store.delete(put.digest);
    expect(await fx.store.get(put.digest)).toBeNull();
    expect(await fx.store.has(put.digest)).toBe(false);
    await fx.store.delete(put.digest);
  });

  it("detects corrupted bytes on read instead of returning them", async () => {
    const put = await fx.store.put(Buffer.from("original content"));
    await fx.corrupt(put.digest, Buffer.from("tampered content"));
    await expect(fx.store.get(put.digest)).rejects.toBeInstanceOf(BlobCorruptedError);
  });
});

describe("LocalBlobStore on disk", () => {
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "awaken-blobs-"));
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  it("lays blobs out as sha256/ab/cdef…, directories 0700 and files 0600, no temp files left", async () => {
    const dir = join(home, "blobs");
    const store = new LocalBlobStore(dir);
    const { digest } = await store.put(Buffer.from("laid out"));
    const hex = digest.slice("sha256:".length);
    const file = join(dir, "sha256", hex.slice(0, 2), hex.slice(2));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    for (const d of [dir, join(dir, "sha256"), join(dir, "sha256", hex.slice(0, 2))]) {
      expect(statSync(d).mode & 0o777).toBe(0o700);
    }
    expect(readdirSync(join(dir, "sha256", hex.slice(0, 2)))).toEqual([hex.slice(2)]);
  });

  it("a hostile digest never touches the file system", async () => {
    const store = new LocalBlobStore(join(home, "blobs"));
    await expect(store.delete("sha256:../../victim")).rejects.toThrow(/not a blob digest/);
    expect(readdirSync(home)).toEqual([]);
  });
});
