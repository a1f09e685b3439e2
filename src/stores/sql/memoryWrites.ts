import { sql } from "kysely";
import { ancestorPaths } from "../../resources/memory/memoryPaths.js";
import type {
  MemoryAuthor,
  MemoryStoreRecord,
  MemoryWriteLimits,
  MemoryWriteResult,
} from "../../resources/memory/ports.js";
import type { SqlDialect, Tx } from "./db.js";
import { contentSha256, type MemoryRow, toMemory, toStore, versionRow } from "./memoryRows.js";

// The writes that change a memory, each inside the caller's transaction, after `lockStore`: the API
// and a run's write-back share them, so both obey the same preconditions and path rules.

/**
 * The store, locked against other writers of its memories until the transaction ends (PostgreSQL;
 * SQLite has one writer at a time). Ordering writers per store is what makes a content precondition
 * or a path check still true when the write lands.
 */
export async function lockStore(
  tx: Tx,
  dialect: SqlDialect,
  workspaceId: string,
  storeId: string,
): Promise<MemoryStoreRecord | null> {
  let query = tx
    .selectFrom("memory_stores")
    .selectAll()
    .where("workspace_id", "=", workspaceId)
    .where("id", "=", storeId);
  if (dialect === "postgres") query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? toStore(row) : null;
}

export function memoryRowOf(tx: Tx, storeId: string, memoryId: string): Promise<MemoryRow | undefined> {
  return tx
    .selectFrom("memories")
    .selectAll()
    .where("memory_store_id", "=", storeId)
    .where("id", "=", memoryId)
    .executeTakeFirst();
}

/** Code points, as SQL's `substr` counts on both backends (JS `length` counts UTF-16 units). */
const charLength = (s: string): number => Array.from(s).length;

/**
 * A memory whose path equals `path`, is an ancestor of it or lies below it (`/notes` and
 * `/notes/todo.md` overlap: one would be both a file and a directory), other than `exceptId`.
 */
async function overlapping(
  tx: Tx,
  storeId: string,
  path: string,
  exceptId: string | null,
): Promise<{ id: string; path: string } | null> {
  const below = `${path}/`;
  let query = tx
    .selectFrom("memories")
    .select(["id", "path"])
    .where("memory_store_id", "=", storeId)
    .where((eb) =>
      eb.or([
        eb("path", "in", [path, ...ancestorPaths(path)]),
        eb(sql<string>`substr(path, 1, ${charLength(below)})`, "=", below),
      ]),
    );
  if (exceptId) query = query.where("id", "!=", exceptId);
  return (await query.limit(1).executeTakeFirst()) ?? null;
}

async function memoryCount(tx: Tx, storeId: string): Promise<number> {
  const row = await tx
    .selectFrom("memories")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("memory_store_id", "=", storeId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function applyCreate(
  tx: Tx,
  store: MemoryStoreRecord,
  input: { id: string; versionId: string; path: string; content: string; author: MemoryAuthor | null },
  limits: MemoryWriteLimits,
  now: number,
): Promise<MemoryWriteResult> {
  if (store.archivedAt !== null) return { ok: false, refusal: { kind: "store_archived" } };
  const clash = await overlapping(tx, store.id, input.path, null);
  if (clash) return pathConflict(clash);
  if ((await memoryCount(tx, store.id)) >= limits.maxMemoriesPerStore) {
    return { ok: false, refusal: { kind: "store_full", limit: limits.maxMemoriesPerStore } };
  }
  const row: MemoryRow = {
    id: input.id,
    workspace_id: store.workspaceId,
    memory_store_id: store.id,
    path: input.path,
    content: input.content,
    content_sha256: contentSha256(input.content),
    content_size_bytes: Buffer.byteLength(input.content, "utf8"),
    memory_version_id: input.versionId,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto("memories").values(row).execute();
  await tx
    .insertInto("memory_versions")
    .values(versionRow(store.workspaceId, input.versionId, "created", row, input.author, now))
    .execute();
  return { ok: true, memory: toMemory(row) };
}

export async function applyUpdate(
  tx: Tx,
  store: MemoryStoreRecord,
  memoryId: string,
  input: {
    versionId: string;
    path: string | null;
    content: string | null;
    expectedContentSha256: string | null;
    author: MemoryAuthor | null;
  },
  now: number,
): Promise<MemoryWriteResult> {
  const current = await memoryRowOf(tx, store.id, memoryId);
  if (!current) return { ok: false, refusal: { kind: "memory_not_found" } };
  const path = input.path ?? current.path;
  const content = input.content ?? current.content;
  // Already exactly as asked: success without a version, whatever the precondition (SDK rule).
  if (path === current.path && content === current.content) return { ok: true, memory: toMemory(current) };
  if (store.archivedAt !== null) return { ok: false, refusal: { kind: "store_archived" } };
  if (input.expectedContentSha256 !== null && input.expectedContentSha256 !== current.content_sha256) {
    return { ok: false, refusal: { kind: "precondition_failed" } };
  }
  if (path !== current.path) {
    const clash = await overlapping(tx, store.id, path, current.id);
    if (clash) return pathConflict(clash);
  }
  const next: MemoryRow = {
    ...current,
    path,
    content,
    content_sha256: contentSha256(content),
    content_size_bytes: Buffer.byteLength(content, "utf8"),
    memory_version_id: input.versionId,
    updated_at: now,
  };
  const { id, workspace_id, memory_store_id, created_at, ...changes } = next;
  await tx.updateTable("memories").set(changes).where("id", "=", id).execute();
  await tx
    .insertInto("memory_versions")
    .values(versionRow(store.workspaceId, input.versionId, "modified", next, input.author, now))
    .execute();
  return { ok: true, memory: toMemory(next) };
}

/** Deletes the memory (an archived store's too: the SDK allows it) and records its `deleted` version. */
export async function applyDelete(
  tx: Tx,
  store: MemoryStoreRecord,
  memoryId: string,
  input: { versionId: string; expectedContentSha256: string | null; author: MemoryAuthor | null },
  now: number,
): Promise<MemoryWriteResult> {
  const current = await memoryRowOf(tx, store.id, memoryId);
  if (!current) return { ok: false, refusal: { kind: "memory_not_found" } };
  if (input.expectedContentSha256 !== null && input.expectedContentSha256 !== current.content_sha256) {
    return { ok: false, refusal: { kind: "precondition_failed" } };
  }
  await tx.deleteFrom("memories").where("id", "=", current.id).execute();
  await tx
    .insertInto("memory_versions")
    .values(versionRow(store.workspaceId, input.versionId, "deleted", current, input.author, now))
    .execute();
  return { ok: true, memory: toMemory(current) };
}

function pathConflict(clash: { id: string; path: string }): MemoryWriteResult {
  return {
    ok: false,
    refusal: { kind: "path_conflict", conflictingPath: clash.path, conflictingMemoryId: clash.id },
  };
}
