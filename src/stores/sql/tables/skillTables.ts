/** The skills family's tables (resources/skills), part of `Database` (schema.ts). */
export type SkillTables = Record<never, never>;
