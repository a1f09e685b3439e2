/**
 * The dream store on a SQLite file and on PostgreSQL: a dream's end and its output store are one
 * transaction, and only a dream not yet ended can end. Concurrent finishers (two replicas reading
 * the same answered session) make exactly one output store; a finisher that loses to a cancel
 * writes nothing; an output the memory store refuses leaves no store and fails the dream.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DreamRecord } from "../../src/dreams/ports.js";
import { newId } from "../../src/kernel/ids.js";
import type { MemoryStoreRecord } from "../../src/resources/memory/ports.js";
import type { Db } from "../../src/stores/sql/db.js";
import { SqlDreamStore } from "../../src/stores/sql/sqlDreamStore.js";
import { SqlMemoryStore } from "../../src/stores/sql/sqlMemoryStore.js";
import { openSqlite } from "../../src/stores/sqlite/openSqlite.js";
import { openTestPostgres, postgresUnavailable } from "../support/postgresFixtures.js";

const WORKSPACE = "wrkspc_test";
const LIMITS = { maxContentBytes: 1024, maxMemoriesPerStore: 50 };
const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

interface Backend {
  dreams: SqlDreamStore;
  memory: SqlMemoryStore;
  db: Db;
  close(): Promise<void>;
}

const BACKENDS = {
  "SQLite file": async (): Promise<Backend> => {
    const dir = mkdtempSync(join(tmpdir(), "awaken-dreams-"));
    const handle = await openSqlite(join(dir, "awaken.db"));
    return {
      dreams: new SqlDreamStore(handle.db, "sqlite"),
      memory: new SqlMemoryStore(handle.db, "sqlite"),
      db: handle.db,
      close: async () => {
        await handle.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  PostgreSQL: async (): Promise<Backend> => {
    const pg = await openTestPostgres();
    return {
      dreams: new SqlDreamStore(pg.handle.db, "postgres"),
      memory: new SqlMemoryStore(pg.handle.db, "postgres"),
      db: pg.handle.db,
      close: () => pg.dispose(),
    };
  },
} as const;

const dreamRecord = (): DreamRecord => ({
  id: newId("drm"),
  workspaceId: WORKSPACE,
  status: "running",
  inputs: [
    { type: "memory_store", memory_store_id: "memstore_source" },
    { type: "sessions", session_ids: ["sesn_a"] },
  ],
  instructions: null,
  model: { id: "offline-dreamer", speed: "standard" },
  outputBehavior: { type: "create_new" },
  outputStoreId: null,
  sessionId: "sesn_dream",
  error: null,
  usage: null,
  createdAt: 1,
  endedAt: null,
  archivedAt: null,
});

const outputStore = (): MemoryStoreRecord => ({
  id: newId("memstore"),
  workspaceId: WORKSPACE,
  name: "out",
  description: "",
  metadata: {},
  createdAt: 2,
  updatedAt: 2,
  archivedAt: null,
});

const memories = (paths: string[]) =>
  paths.map((path) => ({
    id: newId("mem"),
    versionId: newId("memver"),
    path,
    content: `content of ${path}`,
  }));

describe.each(Object.keys(BACKENDS) as Array<keyof typeof BACKENDS>)("dream store on %s", (name) => {
  let b: Backend | undefined;
  beforeEach(async (ctx) => {
    const reason = name === "PostgreSQL" ? postgresUnavailable() : null;
    if (reason) ctx.skip(reason);
    b = await BACKENDS[name]();
  });
  afterEach(async () => {
    await b?.close();
    b = undefined;
  });

  const storeCount = async () =>
    Number(
      (
        await b!.db
          .selectFrom("memory_stores")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it("concurrent finishers of one dream make exactly one output store", async () => {
    const dream = dreamRecord();
    await b!.dreams.create(dream);
    const finishers = Array.from({ length: 4 }, () => ({
      store: outputStore(),
      memories: memories(["/a.md", "/b/c.md"]),
    }));
    const results = await Promise.all(
      finishers.map((f) =>
        b!.dreams.complete(
          WORKSPACE,
          dream.id,
          { target: { kind: "new", store: f.store }, memories: f.memories, usage: USAGE },
          LIMITS,
          3,
        ),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = finishers[results.indexOf(true)]!;
    expect(await storeCount()).toBe(1);
    const ended = await b!.dreams.get(WORKSPACE, dream.id);
    expect(ended).toMatchObject({
      status: "completed",
      outputStoreId: winner.store.id,
      usage: USAGE,
      endedAt: 3,
    });
    const snapshot = await b!.memory.snapshot(WORKSPACE, winner.store.id);
    expect(snapshot?.map((m) => [m.path, m.content]).sort()).toEqual([
      ["a.md", "content of /a.md"],
      ["b/c.md", "content of /b/c.md"],
    ]);
    // Ended: neither a cancel nor a failure changes it.
    expect(await b!.dreams.cancel(WORKSPACE, dream.id, 4)).toBe(false);
    expect(await b!.dreams.fail(WORKSPACE, dream.id, { type: "x", message: "y" }, USAGE, 4)).toBe(false);
    expect((await b!.dreams.get(WORKSPACE, dream.id))?.status).toBe("completed");
    expect(await b!.dreams.active(10)).toEqual([]);
  });

  it("a finisher that loses to a cancel writes nothing", async () => {
    const dream = dreamRecord();
    await b!.dreams.create(dream);
    expect(await b!.dreams.active(10)).toEqual([{ workspaceId: WORKSPACE, id: dream.id }]);
    expect(await b!.dreams.cancel(WORKSPACE, dream.id, 3)).toBe(true);
    const done = await b!.dreams.complete(
      WORKSPACE,
      dream.id,
      { target: { kind: "new", store: outputStore() }, memories: memories(["/a.md"]), usage: USAGE },
      LIMITS,
      4,
    );
    expect(done).toBe(false);
    expect(await storeCount()).toBe(0);
    expect(await b!.dreams.get(WORKSPACE, dream.id)).toMatchObject({
      status: "canceled",
      outputStoreId: null,
      endedAt: 3,
    });
  });

  it("an output the memory store refuses is undone whole and fails the dream", async () => {
    const dream = dreamRecord();
    await b!.dreams.create(dream);
    // More memories than a store may hold: the last insert is refused, so none stays.
    const done = await b!.dreams.complete(
      WORKSPACE,
      dream.id,
      {
        target: { kind: "new", store: outputStore() },
        memories: memories(["/a.md", "/b.md", "/c.md"]),
        usage: USAGE,
      },
      { ...LIMITS, maxMemoriesPerStore: 2 },
      4,
    );
    expect(done).toBe(false);
    expect(await storeCount()).toBe(0);
    const failed = await b!.dreams.get(WORKSPACE, dream.id);
    expect(failed).toMatchObject({
      status: "failed",
      outputStoreId: null,
      error: { type: "invalid_output" },
    });
  });

  it("one update_existing dream holds a store until it ends, whoever races for it", async () => {
    const updating = (): DreamRecord => ({
      ...dreamRecord(),
      status: "pending",
      outputBehavior: { type: "update_existing", memory_store_id: "memstore_source" },
    });
    const racers = Array.from({ length: 4 }, updating);
    const results = await Promise.all(racers.map((d) => b!.dreams.create(d)));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    const winner = racers[results.findIndex((r) => r.ok)]!;
    for (const r of results.filter((r) => !r.ok)) expect(r).toEqual({ ok: false, heldBy: winner.id });
    expect(await b!.dreams.holderOf(WORKSPACE, "memstore_source")).toBe(winner.id);
    // Another workspace's store of the same id is not held.
    expect(await b!.dreams.holderOf("wrkspc_other", "memstore_source")).toBeNull();
    // A create_new dream of the store is never held back.
    expect(await b!.dreams.create(dreamRecord())).toEqual({ ok: true });
    expect(await b!.dreams.cancel(WORKSPACE, winner.id, 5)).toBe(true);
    expect(await b!.dreams.holderOf(WORKSPACE, "memstore_source")).toBeNull();
    expect(await b!.dreams.create(updating())).toEqual({ ok: true });
  });

  it("update_existing makes the input store exactly the answer, by path, in one transaction", async () => {
    const store = { ...outputStore(), id: "memstore_source" };
    await b!.memory.createStore(store);
    for (const [path, content] of [
      ["/keep.md", "kept"],
      ["/change.md", "before"],
      ["/drop.md", "dropped"],
    ] as const) {
      const made = await b!.memory.createMemory(
        WORKSPACE,
        store.id,
        { id: newId("mem"), versionId: newId("memver"), path, content, author: null },
        LIMITS,
        2,
      );
      expect(made.ok).toBe(true);
    }
    const dream: DreamRecord = {
      ...dreamRecord(),
      outputBehavior: { type: "update_existing", memory_store_id: store.id },
    };
    await b!.dreams.create(dream);
    const answer = [
      { path: "/keep.md", content: "kept" },
      { path: "/change.md", content: "after" },
      { path: "/drop.md/now-a-directory.md", content: "moved in" },
    ].map((m) => ({ ...m, id: newId("mem"), versionId: newId("memver") }));
    const done = await b!.dreams.complete(
      WORKSPACE,
      dream.id,
      { target: { kind: "existing", storeId: store.id }, memories: answer, usage: USAGE },
      LIMITS,
      3,
    );
    expect(done).toBe(true);
    const snapshot = await b!.memory.snapshot(WORKSPACE, store.id);
    expect(snapshot?.map((m) => [m.path, m.content]).sort()).toEqual([
      ["change.md", "after"],
      ["drop.md/now-a-directory.md", "moved in"],
      ["keep.md", "kept"],
    ]);
    expect(await b!.dreams.get(WORKSPACE, dream.id)).toMatchObject({
      status: "completed",
      outputStoreId: store.id,
    });
    expect(await b!.dreams.holderOf(WORKSPACE, store.id)).toBeNull();
    expect(await storeCount()).toBe(1);
  });
});
