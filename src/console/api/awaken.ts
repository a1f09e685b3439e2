import type Anthropic from "@anthropic-ai/sdk";
import type { Stream } from "@anthropic-ai/sdk/core/streaming";

// Awaken's own extensions of the public API (`/v1/awaken/…`), called through the same SDK client
// as every other read: the same key, base URL and errors. These are the shapes the server answers.

export interface AwakenPage<T> {
  data: T[];
  next_page: string | null;
}

export interface CredentialRevision {
  type: "vault_credential_revision";
  credential_id: string;
  revision: number;
  auth: { type: string } & Record<string, unknown>;
  secret_fields: string[];
  created_at: string;
}

export interface CredentialOpen {
  type: "credential_open";
  id: string;
  session_id: string | null;
  run_id: string | null;
  holder: string;
  owner: string;
  epoch: number;
  vault_id: string;
  credential_id: string;
  revision: number;
  usage_key: string;
  outcome: "opened" | "refreshed" | "refused";
  reason: string | null;
  refreshed_to: number | null;
  created_at: string;
}

/** A webhook endpoint as `GET /v1/organizations/webhooks` answers it (never its secret). */
export interface WebhookEndpoint {
  id: string;
  name: string;
  url: string;
  state: "enabled" | "disabled";
  enabled_events: string[];
  created_at: string;
}

/** One delivery of an event to an endpoint; `abandoned` is the dead-letter state. */
export interface WebhookDelivery {
  type: "webhook_delivery";
  id: string;
  event_id: string;
  event_type: string;
  state: "pending" | "delivered" | "abandoned";
  attempts: number;
  last_error: string | null;
  created_at: string;
  settled_at: string | null;
}

export interface EnvironmentKey {
  type: "environment_key";
  id: string;
  environment_id: string;
  name: string | null;
  key_hint: string;
  created_at: string;
  revoked_at: string | null;
}

/** One launch stage of a session's ACP harness Brain, as `GET …/sessions/{id}/harness` lists it. */
export interface HarnessStage {
  runtime: string;
  stage: "installing" | "launching" | "initializing" | "ready" | "failed";
  attempt?: number;
  acp_session_id?: string;
  loaded?: boolean;
  agent_info?: { name?: string; version?: string };
  error?: string;
  processed_at: string;
}

export interface HarnessStages {
  type: "harness_stages";
  data: HarnessStage[];
  current: HarnessStage["stage"] | null;
}

export interface WorkerClaim {
  run_id: string;
  session_id: string;
  slot: string;
  epoch: number;
  lease_expires_at: string | null;
  renewed_at: string;
  lapsed: boolean;
}

export interface WorkerRosterEntry {
  type: "worker";
  id: string;
  kind: "in_process" | "remote";
  this_replica: boolean;
  alive: boolean;
  last_seen_at: string | null;
  slots: number | null;
  claims: WorkerClaim[];
}

export interface SelfHostedWorker {
  type: "self_hosted_worker";
  environment_id: string;
  worker_id: string;
  alive: boolean;
  last_polled_at: string;
  work: Array<{ work_id: string; session_id: string; state: string; lease_expires_at: string | null }>;
}

export interface WorkerRoster {
  type: "worker_roster";
  workers: WorkerRosterEntry[];
  self_hosted: SelfHostedWorker[];
  truncated: boolean;
}

/** A resource as a run realized it: ids, paths, a file's digest, a store's access; never a token. */
export type RealizedResource =
  | {
      type: "file";
      id: string;
      file_id: string;
      mount_path: string;
      digest: string;
      size_bytes: number;
    }
  | { type: "memory_store"; memory_store_id: string; mount_path: string; access: string }
  | {
      type: "github_repository";
      id: string;
      mount_path: string;
      has_token: boolean;
      checkout: { type: string; name?: string; sha?: string } | null;
    };

export interface MemoryWriteBackOutcome {
  memory_store_id: string;
  path: string;
  outcome: "written" | "deleted" | "conflict" | "refused";
  memory_id?: string;
  version_id?: string;
  reason?: string;
}

/** What one run of a session saw: the resources and exact skill versions it realized, and its write-backs. */
export interface RunResourceUsage {
  type: "run_resource_usage";
  run_id: string | null;
  realized_at: string;
  mode: "mounted" | "tools";
  resources: RealizedResource[];
  skills: Array<{ skill_id: string; version: string; name: string; path?: string }>;
  memory_write_backs: Array<{ at: string; told_in: string | null; outcomes: MemoryWriteBackOutcome[] }>;
}

/** How a session's last run ended (`/v1/awaken/sessions/outcomes`): the wire's status stays `idle`. */
export interface LastRun {
  outcome: "completed" | "failed" | "interrupted" | "waiting" | "other";
  stop_reason: string;
  error: { type: string; message: string } | null;
  started_at: string | null;
  ended_at: string;
}

export interface SessionOutcome {
  type: "session_outcome";
  session_id: string;
  last_run: LastRun | null;
}

export interface HourOfRuns {
  hour: string;
  completed: number;
  failed: number;
  interrupted: number;
  waiting: number;
  other: number;
}

export interface ModelTokens {
  provider: string;
  model: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The Console's home (`/v1/awaken/overview`), folded from the caller's sessions' committed history. */
export interface Overview {
  type: "overview";
  since: string;
  now: string;
  runs_by_hour: HourOfRuns[];
  run_latency_ms: { runs: number; p50: number | null; p99: number | null };
  tokens: ModelTokens[];
  live_sessions: Array<{ id: string; title: string | null; status: string }>;
  live_sessions_truncated: boolean;
  sessions_read: number;
  truncated: boolean;
}

/** A workspace's usage (`/v1/awaken/usage`), from its committed usage facts, beside its quotas. */
export interface WorkspaceUsage {
  type: "workspace_usage";
  workspace_id: string;
  days: Array<{ date: string; tokens: number; list_cost: { amount: string; currency: string } }>;
  now: {
    active_runs: number;
    sessions_last_hour: number;
    tokens_last_24h: number;
    list_cost_last_24h: { amount: string; currency: string };
  };
  limits: {
    concurrent_runs: number | null;
    sessions_per_hour: number | null;
    tokens_per_day: number | null;
    list_cost_per_day: { amount: string; currency: string } | null;
  } | null;
  /** The same days' usage per user profile the sessions are attributed to, the most tokens first. */
  user_profiles?: Array<{
    user_profile_id: string;
    tokens: number;
    list_cost: { amount: string; currency: string };
  }>;
}

export interface AuditEntry {
  type: "audit_entry";
  id: string;
  actor: string;
  action: string;
  resource_type: string;
  resource_id: string;
  revision: number | null;
  before_digest: string | null;
  after_digest: string | null;
  created_at: string;
}

/** An API key as listed: never its secret (only its creation answers that, and the Console creates none). */
export interface ApiKey {
  id: string;
  type: "api_key";
  role: string;
  agent_ids: string[] | null;
  label: string | null;
  created_at: string;
  revoked_at: string | null;
}

export type ImageBuildStatus = "pending" | "building" | "ready" | "failed";

/** `awaken_image` of an environment: the derived container image of its current revision. */
export interface EnvironmentImage {
  id: string;
  status: ImageBuildStatus;
  base_image: string;
  resolution_id: string;
  digest: string | null;
  image: string | null;
  error: string | null;
  log_tail: string | null;
  attempts: number;
}

/** A build as `GET /v1/awaken/image_builds` lists it, with the workspace's own environments only. */
export interface ImageBuild extends EnvironmentImage {
  type: "image_build";
  recipe_digest: string;
  epoch: number;
  created_at: string;
  updated_at: string;
  environments: Array<{ id: string; name: string; revisions: number[]; current: boolean }>;
}

function path(...segments: string[]): string {
  return `/v1/awaken/${segments.map(encodeURIComponent).join("/")}`;
}

export const awaken = {
  credentialRevisions: (client: Anthropic, vaultId: string, credentialId: string, signal: AbortSignal) =>
    client.get<AwakenPage<CredentialRevision>>(
      path("vaults", vaultId, "credentials", credentialId, "revisions"),
      { query: { limit: 100 }, signal },
    ),
  credentialOpens: (
    client: Anthropic,
    filter: { credential_id?: string; session_id?: string; page?: string },
    signal: AbortSignal,
  ) =>
    client.get<AwakenPage<CredentialOpen>>(path("credential_opens"), {
      query: { limit: 50, ...filter },
      signal,
    }),
  /** The SDK's organization webhooks API, scoped to the key's workspace (up to 32 endpoints). */
  webhooks: (client: Anthropic, signal: AbortSignal) =>
    client.get<{ data: WebhookEndpoint[] }>("/v1/organizations/webhooks", { query: { limit: 100 }, signal }),
  webhookDeliveries: (client: Anthropic, endpointId: string, state: string, signal: AbortSignal) =>
    client.get<{ data: WebhookDelivery[] }>(path("webhooks", endpointId, "deliveries"), {
      query: { limit: 50, state },
      signal,
    }),
  redeliverWebhook: (client: Anthropic, endpointId: string, deliveryId: string) =>
    client.post<WebhookDelivery>(path("webhooks", endpointId, "deliveries", deliveryId, "redeliver")),
  environmentKeys: (client: Anthropic, environmentId: string, signal: AbortSignal) =>
    client.get<AwakenPage<EnvironmentKey>>(path("environments", environmentId, "keys"), {
      query: { limit: 100 },
      signal,
    }),
  imageBuilds: (client: Anthropic, page: string | undefined, signal: AbortSignal) =>
    client.get<AwakenPage<ImageBuild>>(path("image_builds"), {
      query: { limit: 50, ...(page ? { page } : {}) },
      signal,
    }),
  /** Retries the failed image build of the environment's current revision. */
  rebuildImage: (client: Anthropic, environmentId: string) =>
    client.post<{ awaken_image?: EnvironmentImage }>(path("environments", environmentId, "image", "rebuild")),
  /** Per run in commit order, what each run of the session saw (a page of runs). */
  resourceUsage: (client: Anthropic, sessionId: string, page: string | undefined, signal: AbortSignal) =>
    client.get<AwakenPage<RunResourceUsage>>(path("sessions", sessionId, "resource_usage"), {
      query: { limit: 20, ...(page ? { page } : {}) },
      signal,
    }),
  harnessStages: (client: Anthropic, sessionId: string, signal: AbortSignal) =>
    client.get<HarnessStages>(path("sessions", sessionId, "harness"), { signal }),
  sessionOutcomes: (client: Anthropic, sessionIds: string[], signal: AbortSignal) =>
    client.get<{ data: SessionOutcome[] }>(path("sessions", "outcomes"), {
      query: { session_ids: sessionIds },
      signal,
    }),
  overview: (client: Anthropic, signal: AbortSignal) => client.get<Overview>(path("overview"), { signal }),
  usage: (client: Anthropic, signal: AbortSignal) =>
    client.get<WorkspaceUsage>(path("usage"), { query: { days: 7 }, signal }),
  audit: (client: Anthropic, filter: { resource_type?: string; page?: string }, signal: AbortSignal) =>
    client.get<AwakenPage<AuditEntry>>(path("audit"), { query: { limit: 50, ...filter }, signal }),
  apiKeys: (client: Anthropic, page: string | undefined, signal: AbortSignal) =>
    client.get<AwakenPage<ApiKey>>(path("api_keys"), {
      query: { limit: 100, ...(page ? { page } : {}) },
      signal,
    }),
  revokeApiKey: (client: Anthropic, keyId: string) => client.post<ApiKey>(path("api_keys", keyId, "revoke")),
  workers: (client: Anthropic, signal: AbortSignal) => client.get<WorkerRoster>(path("workers"), { signal }),
  /** Hints that the workspace's sessions (and so its approvals) may have changed (no data: read again when told). */
  sessionHints: (client: Anthropic, signal: AbortSignal) =>
    client.get<Stream<{ type: string }>>(path("sessions", "stream"), { stream: true, signal }),
};
