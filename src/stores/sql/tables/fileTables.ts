/** The files family's tables (resources/files), part of `Database` (schema.ts). */
export type FileTables = Record<never, never>;
