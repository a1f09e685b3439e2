/** The sessionResources family's tables (resources/sessionResources), part of `Database` (schema.ts). */
export interface SessionResourceTables {
  session_resources: {
    id: string;
    workspace_id: string;
    session_id: string;
    /** `file`, `memory_store` or `github_repository`; the columns of the other types are null. */
    type: string;
    mount_path: string;
    file_id: string | null;
    memory_store_id: string | null;
    access: string | null;
    name: string | null;
    description: string | null;
    instructions: string | null;
    url: string | null;
    checkout_json: string | null;
    /** A repository's token, sealed (`sealed1:` envelope); null: it has none. */
    token_sealed: string | null;
    /** The sealed token's revision: bumped on every rotation, part of its sealing identity. */
    token_revision: number;
    created_at: number;
    updated_at: number;
  };
}
