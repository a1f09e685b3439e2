/** The blobs family's tables (resources/blobs), part of `Database` (schema.ts). */
export interface BlobTables {
  /**
   * Content-addressed bytes (migration 023), used on PostgreSQL so every replica and remote worker
   * reaches them. `digest` is `sha256:<64 hex>` of `bytes`; rows are never updated.
   */
  blobs: {
    digest: string;
    size: number;
    bytes: Uint8Array;
    created_at: number;
  };
}
