import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openSqlite, type SqliteHandle } from "../../src/stores/sqlite/openSqlite.js";

// The SQLite hot-path writer's group commit (SyncWriter), on a real database file. What is
// checked from outside goes through a second connection to the file, so it sees only what was
// committed.

let dir: string;
let file: string;
let handle: SqliteHandle;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "awaken-syncwriter-"));
  file = join(dir, "awaken.db");
  handle = await openSqlite(file);
  await sql`create table notes (n integer primary key, body text not null)`.execute(handle.db);
});

afterEach(async () => {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The committed rows, read on a connection of their own. */
function committedNotes(): number[] {
  const reader = new Database(file, { readonly: true });
  try {
    return (reader.prepare("select n from notes order by n").all() as { n: number }[]).map((r) => r.n);
  } finally {
    reader.close();
  }
}

/** A write that inserts note `n` and answers how many notes it sees, itself included. */
const insertNote = (n: number) =>
  handle.writer.write((s) => {
    s.run("insert into notes (n, body) values (?, ?)", n, `note ${n}`);
    return s.get<{ c: number }>("select count(*) as c from notes")?.c;
  });

describe("SyncWriter group commit", () => {
  it("runs a lone write at once, in a transaction of its own", async () => {
    const before = handle.writer.transactions;
    const written = insertNote(1);
    // Already committed before anything was awaited: an idle writer adds no wait.
    expect(committedNotes()).toEqual([1]);
    await expect(written).resolves.toBe(1);
    expect(handle.writer.transactions - before).toBe(1);
  });

  it("puts the writes that follow in the same turn into ONE transaction, in order", async () => {
    const before = handle.writer.transactions;
    const writes = [1, 2, 3, 4, 5, 6].map(insertNote);
    // The first ran at once; the other five wait for the end of the turn.
    expect(committedNotes()).toEqual([1]);
    // Each write saw every write submitted before it, as if they had run one after the other.
    await expect(Promise.all(writes)).resolves.toEqual([1, 2, 3, 4, 5, 6]);
    expect(handle.writer.transactions - before).toBe(2);
    expect(committedNotes()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("rolls back only the write that throws; the rest of its batch lands", async () => {
    const first = insertNote(1);
    const second = insertNote(2);
    const failing = handle.writer.write((s) => {
      s.run("insert into notes (n, body) values (?, ?)", 3, "half-written");
      throw new Error("refused by its own rules");
    });
    const duplicate = insertNote(2); // primary key violation: an SQLite error inside the batch
    const last = insertNote(4);
    await expect(first).resolves.toBe(1);
    await expect(second).resolves.toBe(2);
    await expect(failing).rejects.toThrow("refused by its own rules");
    await expect(duplicate).rejects.toThrow(/UNIQUE constraint failed/);
    // The failed writes left nothing behind (note 3 was rolled back with its savepoint).
    await expect(last).resolves.toBe(3);
    expect(committedNotes()).toEqual([1, 2, 4]);
  });

  it("rejects every write of a batch whose transaction ends without committing, and keeps none", async () => {
    await insertNote(1);
    const batch = [2, 3].map(insertNote);
    // A write that ends the whole transaction (as SQLite itself does on a full disk or an I/O
    // error): what came before it in the batch is gone, and nothing after it may run unguarded.
    const breaking = handle.writer.write((s) => s.run("rollback"));
    const after = insertNote(5);
    const outcomes = await Promise.allSettled([...batch, breaking, after]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected", "rejected", "rejected"]);
    expect(committedNotes()).toEqual([1]);
    // The writer goes on working afterwards.
    await expect(insertNote(6)).resolves.toBe(2);
    expect(committedNotes()).toEqual([1, 6]);
  });

  it("waits for an open Kysely transaction and never writes inside it", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = handle.db.transaction().execute(async (trx) => {
      await sql`insert into notes (n, body) values (10, 'kysely')`.execute(trx);
      await held;
    });
    // Let the Kysely transaction begin and take the connection.
    await new Promise((resolve) => setImmediate(resolve));
    const writes = [1, 2].map(insertNote);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(committedNotes()).toEqual([]);
    release();
    await transaction;
    // They ran after the Kysely transaction committed, and saw its row.
    await expect(Promise.all(writes)).resolves.toEqual([2, 3]);
    expect(committedNotes()).toEqual([1, 2, 10]);
  });
});
