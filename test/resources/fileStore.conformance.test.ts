import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newId } from "../../src/kernel/ids.js";
import { fileLimitsFromEnv } from "../../src/resources/files/fileLimits.js";
import type { FileRecord, FileStore } from "../../src/resources/files/ports.js";
import { SqlFileStore } from "../../src/stores/sql/sqlFileStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres } from "../support/postgresFixtures.js";

// The File family's store on both backends: workspace isolation, scopes, newest-first paging,
// the ids filter, references, and a quota that concurrent uploads cannot overshoot together.

interface Fixture {
  store: FileStore;
  /** The same rows through another pool (PostgreSQL) or the same handle (SQLite). */
  other: FileStore;
  close(): Promise<void>;
}

const BACKENDS: Record<string, () => Promise<Fixture>> = {
  SQLite: async () => {
    const handle = await openSqlite(":memory:");
    const store = new SqlFileStore(handle.db, "sqlite");
    return { store, other: store, close: () => handle.close() };
  },
  PostgreSQL: async () => {
    const pg = await openTestPostgres();
    const replica = await pg.openReplica();
    return {
      store: new SqlFileStore(pg.handle.db, "postgres"),
      other: new SqlFileStore(replica.db, "postgres"),
      close: () => pg.dispose(),
    };
  },
};

const WS = "wrkspc_files_a";
const OTHER_WS = "wrkspc_files_b";
let clock = 1_800_000_000_000;

function file(overrides: Partial<FileRecord> = {}): FileRecord {
  clock += 1;
  return {
    id: newId("file", clock),
    workspaceId: WS,
    filename: "f.txt",
    mimeType: "text/plain",
    sizeBytes: 10,
    digest: `sha256:${"a".repeat(64)}`,
    createdAt: clock,
    downloadable: true,
    scopeId: null,
    expiresAt: null,
    ...overrides,
  };
}

describe.each(Object.keys(BACKENDS))("FileStore conformance: %s", (backend) => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await BACKENDS[backend]!();
  });
  afterEach(async () => {
    await fx.close();
  });

  it("creates, gets within the workspace only, and deletes returning the row", async () => {
    const record = file({ scopeId: "sesn_1", expiresAt: clock + 5000, downloadable: false });
    expect(await fx.store.create(record, 1000)).toEqual({ created: true });
    expect(await fx.store.get(WS, record.id)).toEqual(record);
    expect(await fx.store.get(OTHER_WS, record.id)).toBeNull();
    expect(await fx.store.delete(OTHER_WS, record.id)).toBeNull();
    expect(await fx.store.delete(WS, record.id)).toEqual(record);
    expect(await fx.store.get(WS, record.id)).toBeNull();
    expect(await fx.store.delete(WS, record.id)).toBeNull();
  });

  it("lists newest first with cursors, filters by scope and by ids", async () => {
    const rows = [file(), file({ scopeId: "sesn_1" }), file(), file({ scopeId: "sesn_1" }), file()];
    for (const r of rows) await fx.store.create(r, 1000);
    await fx.store.create(file({ workspaceId: OTHER_WS }), 1000);
    const ids = rows.map((r) => r.id).reverse();
    const first = await fx.store.list(WS, { limit: 2, cursor: null, scopeId: null });
    expect(first.data.map((r) => r.id)).toEqual(ids.slice(0, 2));
    const second = await fx.store.list(WS, { limit: 2, cursor: first.nextCursor, scopeId: null });
    expect(second.data.map((r) => r.id)).toEqual(ids.slice(2, 4));
    const third = await fx.store.list(WS, { limit: 2, cursor: second.nextCursor, scopeId: null });
    expect(third.data.map((r) => r.id)).toEqual(ids.slice(4));
    expect(third.nextCursor).toBeNull();
    const scoped = await fx.store.list(WS, { limit: 10, cursor: null, scopeId: "sesn_1" });
    expect(scoped.data.map((r) => r.id)).toEqual([rows[3]!.id, rows[1]!.id]);
    const byIds = await fx.store.listByIds(WS, [rows[0]!.id, rows[2]!.id, "file_missing"], null);
    expect(byIds.map((r) => r.id)).toEqual([rows[2]!.id, rows[0]!.id]);
    expect(await fx.store.listByIds(WS, [rows[0]!.id, rows[1]!.id], "sesn_1")).toHaveLength(1);
    expect(await fx.store.listByIds(OTHER_WS, [rows[0]!.id], null)).toEqual([]);
    await expect(fx.store.list(WS, { limit: 2, cursor: "forged", scopeId: null })).rejects.toThrow(/page/);
  });

  it("answers whether any file of any workspace references a digest", async () => {
    const digest = `sha256:${"b".repeat(64)}`;
    expect(await fx.store.references(digest)).toBe(false);
    const mine = file({ digest });
    const theirs = file({ digest, workspaceId: OTHER_WS });
    await fx.store.create(mine, 1000);
    await fx.store.create(theirs, 1000);
    await fx.store.delete(WS, mine.id);
    expect(await fx.store.references(digest)).toBe(true);
    await fx.store.delete(OTHER_WS, theirs.id);
    expect(await fx.store.references(digest)).toBe(false);
  });

  it("refuses a file that would exceed the quota and writes nothing", async () => {
    expect(await fx.store.create(file({ sizeBytes: 60 }), 100)).toEqual({ created: true });
    const refused = file({ sizeBytes: 41 });
    expect(await fx.store.create(refused, 100)).toEqual({ created: false, usedBytes: 60 });
    expect(await fx.store.get(WS, refused.id)).toBeNull();
    // Another workspace's usage is its own.
    expect(await fx.store.create(file({ workspaceId: OTHER_WS, sizeBytes: 100 }), 100)).toEqual({
      created: true,
    });
  });

  it("concurrent uploads cannot overshoot the quota together", async () => {
    const attempts = Array.from({ length: 10 }, (_, i) =>
      (i % 2 === 0 ? fx.store : fx.other).create(file({ sizeBytes: 30 }), 100),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((o) => o.created)).toHaveLength(3);
    const page = await fx.store.list(WS, { limit: 100, cursor: null, scopeId: null });
    expect(page.data.reduce((sum, r) => sum + r.sizeBytes, 0)).toBe(90);
  });
});

describe("file limits from the environment", () => {
  it("defaults to 100 MiB per file and 5 GiB per workspace", () => {
    expect(fileLimitsFromEnv({})).toEqual({ maxFileBytes: 104_857_600, workspaceMaxBytes: 5_368_709_120 });
  });

  it("reads both variables", () => {
    expect(
      fileLimitsFromEnv({ AWAKEN_FILE_MAX_BYTES: "1024", AWAKEN_WORKSPACE_FILES_MAX_BYTES: "4096" }),
    ).toEqual({
      maxFileBytes: 1024,
      workspaceMaxBytes: 4096,
    });
  });

  it.each([
    ["AWAKEN_FILE_MAX_BYTES", "lots"],
    ["AWAKEN_FILE_MAX_BYTES", "0"],
    ["AWAKEN_FILE_MAX_BYTES", "1.5"],
    ["AWAKEN_FILE_MAX_BYTES", String(2 * 1024 ** 3)],
    ["AWAKEN_WORKSPACE_FILES_MAX_BYTES", "-1"],
    ["AWAKEN_WORKSPACE_FILES_MAX_BYTES", "1e9"],
  ])("%s=%s stops start-up with a message naming the variable", (name, value) => {
    expect(() => fileLimitsFromEnv({ [name]: value })).toThrow(
      new RegExp(`${name} must be a whole number of bytes`),
    );
  });
});
