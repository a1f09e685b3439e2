import type { ColumnType } from "kysely";
import type { BlobTables } from "./tables/blobTables.js";
import type { CommitTables } from "./tables/commitTables.js";
import type { DeploymentTables } from "./tables/deploymentTables.js";
import type { DreamTables } from "./tables/dreamTables.js";
import type { FileTables } from "./tables/fileTables.js";
import type { ImageBuildTables } from "./tables/imageBuildTables.js";
import type { MemoryTables } from "./tables/memoryTables.js";
import type { SessionResourceTables } from "./tables/sessionResourceTables.js";
import type { SkillTables } from "./tables/skillTables.js";
import type { TunnelTables } from "./tables/tunnelTables.js";
import type { UserProfileTables } from "./tables/userProfileTables.js";
/**
 * The relational shape shared by the SQLite and PostgreSQL backends. Times are integer milliseconds
 * since the epoch; JSON columns hold canonical text. Each table is owned by one context (comment).
 */
export interface Database
  extends CommitTables,
    BlobTables,
    FileTables,
    SkillTables,
    MemoryTables,
    SessionResourceTables,
    DeploymentTables,
    DreamTables,
    TunnelTables,
    ImageBuildTables,
    UserProfileTables {
  // control: IAM
  workspaces: { id: string; name: string; created_at: number };
  api_keys: {
    id: string;
    workspace_id: string;
    key_hash: string;
    label: string;
    created_at: number;
    revoked_at: number | null;
    /** `runtime`, `builder` or `admin` (`control/apiKeyRoles.ts`); the column defaults to admin. */
    role: ColumnType<string, string | undefined, string>;
    /** JSON array of agent ids the key may use; null: every agent of the workspace. */
    agent_ids: ColumnType<string | null, string | null | undefined, string | null>;
    /** `sha256` (stored before migration 020) or `hmac-sha256:<master key id>` (`control/apiKeyHashing.ts`). */
    hash_scheme: ColumnType<string, string | undefined, string>;
  };
  // control: immutable publication history
  agents: {
    id: string;
    workspace_id: string;
    latest_version: number;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
  };
  agent_publications: {
    workspace_id: string;
    agent_id: string;
    version: number;
    fingerprint: string;
    definition_json: string;
    created_at: number;
    /** When the Coordinator's catalog accepted it; null: not yet (the reconciler retries). */
    registered_at: ColumnType<number | null, number | null | undefined, number | null>;
    /** Why the Coordinator refused it for good (a conflicting fingerprint); never retried. */
    registration_error: ColumnType<string | null, string | null | undefined, string | null>;
  };
  // coordinator: rebuildable executable catalog
  executable_agents: {
    workspace_id: string;
    agent_id: string;
    version: number;
    fingerprint: string;
    snapshot_json: string;
    registered_at: number;
  };
  // coordinator: environments as pinned revisions
  environments: {
    id: string;
    workspace_id: string;
    name: string;
    description: string | null;
    scope: string | null;
    metadata_json: string;
    config_type: string;
    latest_revision: number;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
  };
  environment_revisions: {
    environment_id: string;
    revision: number;
    config_json: string;
    created_at: number;
  };
  /** A revision's frozen package resolution (first writer wins). */
  environment_package_resolutions: {
    environment_id: string;
    revision: number;
    resolution_id: string;
    content_json: string;
    created_at: number;
  };
  // coordinator: sessions, threads, committed history
  sessions: {
    id: string;
    workspace_id: string;
    agent_id: string;
    agent_version: number;
    /**
     * The agent the session runs; empty when it is the executable catalog's snapshot of
     * (agent_id, agent_version) as it stands (migration 028): `SESSION_AGENT_SQL` reads either.
     */
    agent_snapshot_json: string;
    environment_id: string;
    environment_revision: number;
    thread_id: string;
    title: string | null;
    metadata_json: string;
    /**
     * The projection a session starts with; from its first commit on, the thread's newest
     * `commits` row carries the current one (`sessionHead.ts`), and these columns stay as written.
     */
    status: string;
    pending_json: string;
    usage_json: string;
    resources_json: string;
    vault_ids_json: string;
    /** The credential pins frozen at creation (migration 004); ids and revisions, never material. */
    credential_pins_json: string;
    budget_json: string | null;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
    deleted_at: number | null;
    /** The data subject the session names (migration 021); null: none. An opaque id. */
    data_subject: string | null;
    /** The user profile a request named at creation (migration 030); null: none. */
    user_profile_id: string | null;
  };
  /** A thread's version is its newest commit's (`commits`, migration 028). */
  threads: {
    id: string;
    session_id: string;
    created_at: number;
    /** The thread that spawned it (migration 029); null on the session's primary thread. */
    parent_thread_id: string | null;
    /** The callable agent a child thread runs, by name and snapshot; null on a primary thread. */
    agent_name: string | null;
    agent_snapshot_json: string | null;
    /** When a child thread was archived; a primary thread is archived with its session. */
    archived_at: number | null;
  };
  // coordinator: dispatch + claims (one row per run)
  runs: {
    id: string;
    session_id: string;
    thread_id: string;
    state: string;
    owner: string | null;
    epoch: number;
    lease_expires_at: number | null;
    available_at: number;
    crash_count: number;
    created_at: number;
    updated_at: number;
    /** W3C trace context of the input that last started or resumed the run (migration 011). */
    trace_context: string | null;
  };
  /** Fenced commits that appended no facts (a settle alone), and those made before migration 028. */
  commit_operations: {
    op_id: string;
    run_id: string;
    payload_hash: string;
    receipt_json: string;
    committed_at: number;
  };
  // coordinator: client-chosen session names and the default environment's key (migration 010)
  session_names: {
    workspace_id: string;
    space: string;
    name: string;
    target_id: string | null;
    reservation: string | null;
    reserved_at: number | null;
    created_at: number;
  };
  // coordinator: self-hosted environments (migration 002)
  environment_keys: {
    id: string;
    workspace_id: string;
    environment_id: string;
    name: string | null;
    key_hash: string;
    key_hint: string;
    created_at: number;
    revoked_at: number | null;
  };
  work_items: {
    id: string;
    workspace_id: string;
    environment_id: string;
    session_id: string;
    state: string;
    metadata_json: string;
    owner: string | null;
    epoch: number;
    polled_at: number | null;
    acknowledged_at: number | null;
    started_at: number | null;
    last_heartbeat_at: number | null;
    lease_expires_at: number | null;
    ttl_seconds: number;
    stop_requested_at: number | null;
    stopped_at: number | null;
    created_at: number;
    updated_at: number;
  };
  work_tokens: { token_hash: string; work_id: string; epoch: number; created_at: number };
  work_pollers: { environment_id: string; worker_id: string; last_polled_at: number };
  // control: vaults and credentials (migration 003). Revisions hold sealed material only.
  vaults: {
    id: string;
    workspace_id: string;
    display_name: string;
    metadata_json: string;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
    deleted_at: number | null;
  };
  vault_credentials: {
    id: string;
    workspace_id: string;
    vault_id: string;
    display_name: string | null;
    metadata_json: string;
    auth_type: string;
    usage_key: string;
    latest_revision: number;
    created_at: number;
    updated_at: number;
    archived_at: number | null;
    deleted_at: number | null;
  };
  vault_credential_revisions: {
    credential_id: string;
    revision: number;
    workspace_id: string;
    auth_json: string;
    secret_fields_json: string;
    seal_format: number;
    master_key_id: string;
    /** base64 of the SecretStore's wrapped data key. */
    wrapped_key: string;
    /** base64 of the SecretStore's ciphertext. */
    sealed_material: string;
    created_at: number;
  };
  // control: every credential open by a last-mile holder (migration 004). No material.
  credential_opens: {
    id: string;
    workspace_id: string;
    session_id: string;
    run_id: string;
    owner: string;
    epoch: number;
    vault_id: string;
    credential_id: string;
    revision: number;
    usage_key: string;
    holder: string;
    outcome: string;
    reason: string | null;
    refreshed_to: number | null;
    created_at: number;
  };
  // control: the admin audit, one row per change in the change's transaction (migration 019). No secret.
  admin_audit: {
    id: string;
    workspace_id: string;
    actor: string;
    action: string;
    resource_type: string;
    resource_id: string;
    revision: number | null;
    before_digest: string | null;
    after_digest: string | null;
    created_at: number;
  };
  // the installation: facts every replica agrees on, first writer wins (migration 008). No secret.
  installation_facts: { name: string; value: string; recorded_at: number };
  // edge (A2A push notifications): configs and their outbox (migration 013)
  push_configs: {
    workspace_id: string;
    task_id: string;
    config_id: string;
    agent_id: string;
    session_id: string;
    thread_id: string;
    url: string;
    token: string;
    auth_scheme: string;
    auth_credentials: string;
    wire_version: string;
    cursor_seq: number;
    finished: number;
    created_at: number;
  };
  push_outbox: {
    workspace_id: string;
    task_id: string;
    config_id: string;
    position: number;
    body: string;
    content_type: string;
    state: string;
    attempts: number;
    next_attempt_at: number;
    lease_owner: string | null;
    lease_until: number | null;
    last_error: string | null;
    settled_at: number | null;
    created_at: number;
    /** "a2a" or "webhook" (migration 032); webhook rows carry their stable id and event type. */
    format: string;
    delivery_id: string | null;
    event_type: string | null;
  };
  // coordinator: webhook endpoints and the sessions their events follow (migration 032)
  webhook_endpoints: {
    id: string;
    workspace_id: string;
    name: string;
    description: string;
    url: string;
    enabled_events_json: string;
    state: string;
    disabled_reason: string;
    /** The signing secret, sealed (`sealedText`); never plaintext. */
    secret_sealed: string;
    secret_revision: number;
    created_at: number;
    updated_at: number;
  };
  webhook_session_cursors: {
    session_id: string;
    workspace_id: string;
    thread_id: string;
    cursor_seq: number;
    finished: number;
    created_at: number;
  };
  // coordinator: the erasures of a subject's captured content, the audit of each (migration 021)
  data_subject_erasures: {
    id: string;
    workspace_id: string;
    subject_id: string;
    requested_by: string;
    counts_json: string;
    created_at: number;
  };
  // control: consent per data subject and purpose (migration 021); granted is 0 or 1
  data_subject_consents: {
    workspace_id: string;
    subject_id: string;
    purpose: string;
    granted: number;
    updated_by: string;
    updated_at: number;
  };
}
