/** The Deployment context's tables (deployments/), part of `Database` (schema.ts). Migration 031. */
export interface DeploymentTables {
  deployments: {
    id: string;
    workspace_id: string;
    name: string;
    description: string | null;
    agent_id: string;
    agent_version: number;
    environment_id: string;
    initial_events_json: string;
    resources_json: string;
    vault_ids_json: string;
    metadata_json: string;
    budget_json: string | null;
    schedule_expression: string | null;
    schedule_timezone: string | null;
    status: string;
    paused_reason_json: string | null;
    /** The next cron instant not yet fired; the scheduler's compare-and-set column. */
    next_run_at: number | null;
    last_run_at: number | null;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
  };
  /** Append-only: a claim row, then its outcome written once (`created_at` set). */
  deployment_runs: {
    id: string;
    workspace_id: string;
    deployment_id: string;
    agent_id: string;
    agent_version: number;
    trigger_type: string;
    /** The cron instant a scheduled run fired for; unique per deployment (null for manual runs). */
    scheduled_at: number | null;
    session_id: string | null;
    error_type: string | null;
    error_message: string | null;
    claimed_at: number;
    created_at: number | null;
  };
}
