/** The sessionResources family's tables (resources/sessionResources), part of `Database` (schema.ts). */
export type SessionResourceTables = Record<never, never>;
