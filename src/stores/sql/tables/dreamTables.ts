/** The Dreams context's table, part of `Database` (schema.ts). Migration 033. */
export interface DreamTables {
  dreams: {
    id: string;
    workspace_id: string;
    /** `pending`, `running`, `completed`, `failed` or `canceled`. */
    status: string;
    inputs_json: string;
    instructions: string | null;
    model_json: string;
    output_behavior_json: string;
    output_store_id: string | null;
    session_id: string | null;
    /** The input store an `update_existing` dream writes, until the dream ends (unique). */
    holds_store_id: string | null;
    error_json: string | null;
    /** Frozen at the dream's end (completed or failed); null before. */
    usage_json: string | null;
    created_at: number;
    ended_at: number | null;
    archived_at: number | null;
  };
}
