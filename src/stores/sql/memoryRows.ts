import { createHash } from "node:crypto";
import type { Selectable } from "kysely";
import type {
  MemoryAuthor,
  MemoryRecord,
  MemoryStoreRecord,
  MemoryVersionOperation,
  MemoryVersionRecord,
} from "../../resources/memory/ports.js";
import { fromJson, toJson } from "./db.js";
import type { MemoryTables } from "./tables/memoryTables.js";

// Row <-> record mapping for the memory family's tables (migration 026).

type StoreRow = Selectable<MemoryTables["memory_stores"]>;
export type MemoryRow = Selectable<MemoryTables["memories"]>;
type VersionRow = Selectable<MemoryTables["memory_versions"]>;

/** Lowercase hex SHA-256 of the UTF-8 bytes, no normalization (the SDK's `content_sha256`). */
export function contentSha256(content: string): string {
  return createHash("sha256").update(content, "utf8").digest("hex");
}

export function storeRow(s: MemoryStoreRecord): StoreRow {
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    name: s.name,
    description: s.description,
    metadata_json: toJson(s.metadata),
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    archived_at: s.archivedAt,
  };
}

export function toStore(r: StoreRow): MemoryStoreRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    description: r.description,
    metadata: fromJson<Record<string, string>>(r.metadata_json),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    archivedAt: r.archived_at === null ? null : Number(r.archived_at),
  };
}

export function toMemory(r: MemoryRow): MemoryRecord {
  return {
    id: r.id,
    memoryStoreId: r.memory_store_id,
    path: r.path,
    content: r.content,
    contentSha256: r.content_sha256,
    contentSizeBytes: Number(r.content_size_bytes),
    memoryVersionId: r.memory_version_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

function authorColumns(a: MemoryAuthor | null): { type: string | null; id: string | null } {
  if (!a) return { type: null, id: null };
  return a.type === "api_actor" ? { type: a.type, id: a.apiKeyId } : { type: a.type, id: a.sessionId };
}

function toAuthor(type: string | null, id: string | null, runId: string | null): MemoryAuthor | null {
  if (type === "api_actor" && id) return { type, apiKeyId: id };
  if (type === "session_actor" && id) return { type, sessionId: id, runId: runId ?? "" };
  return null;
}

/** The version a change records: the memory's state after it (nothing but the path for a deletion). */
export function versionRow(
  workspaceId: string,
  versionId: string,
  operation: MemoryVersionOperation,
  memory: Pick<
    MemoryRow,
    "id" | "memory_store_id" | "path" | "content" | "content_sha256" | "content_size_bytes"
  >,
  author: MemoryAuthor | null,
  now: number,
): VersionRow {
  const by = authorColumns(author);
  const deleted = operation === "deleted";
  return {
    id: versionId,
    workspace_id: workspaceId,
    memory_store_id: memory.memory_store_id,
    memory_id: memory.id,
    operation,
    path: memory.path,
    content: deleted ? null : memory.content,
    content_sha256: deleted ? null : memory.content_sha256,
    content_size_bytes: deleted ? null : memory.content_size_bytes,
    created_at: now,
    created_by_type: by.type,
    created_by_id: by.id,
    created_by_run_id: author?.type === "session_actor" ? author.runId : null,
    redacted_at: null,
    redacted_by_type: null,
    redacted_by_id: null,
  };
}

export function redactionColumns(by: MemoryAuthor | null, now: number) {
  const who = authorColumns(by);
  return {
    path: null,
    content: null,
    content_sha256: null,
    content_size_bytes: null,
    redacted_at: now,
    redacted_by_type: who.type,
    redacted_by_id: who.id,
  };
}

export function toVersion(r: VersionRow): MemoryVersionRecord {
  return {
    id: r.id,
    memoryStoreId: r.memory_store_id,
    memoryId: r.memory_id,
    operation: r.operation as MemoryVersionOperation,
    path: r.path,
    content: r.content,
    contentSha256: r.content_sha256,
    contentSizeBytes: r.content_size_bytes === null ? null : Number(r.content_size_bytes),
    createdAt: Number(r.created_at),
    createdBy: toAuthor(r.created_by_type, r.created_by_id, r.created_by_run_id),
    redactedAt: r.redacted_at === null ? null : Number(r.redacted_at),
    redactedBy: toAuthor(r.redacted_by_type, r.redacted_by_id, null),
  };
}
