/** The memory family's tables (resources/memory), part of `Database` (schema.ts). */
export type MemoryTables = Record<never, never>;
