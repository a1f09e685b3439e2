/** The files family's tables (resources/files), part of `Database` (schema.ts). */
export interface FileTables {
  /** Uploaded files' metadata (migration 024); the bytes are the blob `digest` names. */
  files: {
    id: string;
    workspace_id: string;
    filename: string;
    mime_type: string;
    size_bytes: number;
    digest: string;
    created_at: number;
    /** 1: downloadable through the API; 0: not. */
    downloadable: number;
    scope_id: string | null;
    expires_at: number | null;
  };
}
