/** The skills family's tables (resources/skills), part of `Database` (schema.ts). */
export interface SkillTables {
  skills: {
    id: string;
    workspace_id: string;
    display_name: string;
    /** The kebab-case slug every version shares. */
    name: string;
    latest_version_id: string;
    created_at: number;
    updated_at: number;
  };
  /** Immutable: written once, deleted only whole. */
  skill_versions: {
    id: string;
    skill_id: string;
    workspace_id: string;
    name: string;
    description: string;
    content_digest: string;
    created_at: number;
  };
  /** A version's files: a path relative to the skill's root and the blob holding its bytes. */
  skill_version_files: {
    version_id: string;
    path: string;
    digest: string;
    size_bytes: number;
  };
}
