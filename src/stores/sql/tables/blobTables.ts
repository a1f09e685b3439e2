/** The blobs family's tables (resources/blobs), part of `Database` (schema.ts). */
export type BlobTables = Record<never, never>;
