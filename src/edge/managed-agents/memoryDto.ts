import { isoTime } from "../../kernel/clock.js";
import type {
  MemoryAuthor,
  MemoryListItem,
  MemoryRecord,
  MemoryStoreRecord,
  MemoryVersionRecord,
} from "../../resources/memory/ports.js";

// Projections of memory stores, memories and versions to the wire (SDK beta.memoryStores types).
// `view=basic` leaves content out (null); sizes and hashes are always there, so clients can diff.

export type MemoryView = "basic" | "full";

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

export function memoryStoreDto(s: MemoryStoreRecord): Record<string, unknown> {
  return {
    id: s.id,
    type: "memory_store",
    name: s.name,
    description: s.description,
    metadata: s.metadata,
    created_at: isoTime(s.createdAt),
    updated_at: isoTime(s.updatedAt),
    archived_at: iso(s.archivedAt),
  };
}

export function memoryDto(m: MemoryRecord, view: MemoryView): Record<string, unknown> {
  return {
    id: m.id,
    type: "memory",
    memory_store_id: m.memoryStoreId,
    path: m.path,
    content: view === "full" ? m.content : null,
    content_sha256: m.contentSha256,
    content_size_bytes: m.contentSizeBytes,
    memory_version_id: m.memoryVersionId,
    created_at: isoTime(m.createdAt),
    updated_at: isoTime(m.updatedAt),
  };
}

export function memoryListItemDto(item: MemoryListItem, view: MemoryView): Record<string, unknown> {
  return item.kind === "prefix" ? { type: "memory_prefix", path: item.path } : memoryDto(item.memory, view);
}

/** Only session authors are ever recorded by a run; API authors are the key's id, never its secret. */
function actorDto(a: MemoryAuthor | null): Record<string, unknown> | null {
  if (!a) return null;
  return a.type === "api_actor"
    ? { type: "api_actor", api_key_id: a.apiKeyId }
    : { type: "session_actor", session_id: a.sessionId };
}

export function memoryVersionDto(v: MemoryVersionRecord, view: MemoryView): Record<string, unknown> {
  return {
    id: v.id,
    type: "memory_version",
    memory_store_id: v.memoryStoreId,
    memory_id: v.memoryId,
    operation: v.operation,
    path: v.path,
    content: view === "full" ? v.content : null,
    content_sha256: v.contentSha256,
    content_size_bytes: v.contentSizeBytes,
    created_at: isoTime(v.createdAt),
    redacted_at: iso(v.redactedAt),
    // Optional and never null in the SDK's type (its comment says null): absent, a typed client reads it safely.
    ...(v.createdBy ? { created_by: actorDto(v.createdBy) } : {}),
    ...(v.redactedBy ? { redacted_by: actorDto(v.redactedBy) } : {}),
  };
}
