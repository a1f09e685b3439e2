/** The memory family's tables (resources/memory), part of `Database` (schema.ts). Migration 026. */
export interface MemoryTables {
  memory_stores: {
    id: string;
    workspace_id: string;
    name: string;
    description: string;
    metadata_json: string;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
  };
  /** A memory's current state; its history is in `memory_versions`. */
  memories: {
    id: string;
    workspace_id: string;
    memory_store_id: string;
    path: string;
    content: string;
    content_sha256: string;
    content_size_bytes: number;
    memory_version_id: string;
    created_at: number;
    updated_at: number;
  };
  memory_versions: {
    id: string;
    workspace_id: string;
    memory_store_id: string;
    memory_id: string;
    operation: string;
    path: string | null;
    content: string | null;
    content_sha256: string | null;
    content_size_bytes: number | null;
    created_at: number;
    /** `api_actor` or `session_actor`; null when the author was not recorded. */
    created_by_type: string | null;
    /** The API key's id or the session's id. */
    created_by_id: string | null;
    /** The run that wrote back a `session_actor` version (not on the wire; for audits). */
    created_by_run_id: string | null;
    redacted_at: number | null;
    redacted_by_type: string | null;
    redacted_by_id: string | null;
  };
}
