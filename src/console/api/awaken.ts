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

export interface EnvironmentKey {
  type: "environment_key";
  id: string;
  environment_id: string;
  name: string | null;
  key_hint: string;
  created_at: string;
  revoked_at: string | null;
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
  environmentKeys: (client: Anthropic, environmentId: string, signal: AbortSignal) =>
    client.get<AwakenPage<EnvironmentKey>>(path("environments", environmentId, "keys"), {
      query: { limit: 100 },
      signal,
    }),
  /** Per run in commit order, what each run of the session saw (a page of runs). */
  resourceUsage: (client: Anthropic, sessionId: string, page: string | undefined, signal: AbortSignal) =>
    client.get<AwakenPage<RunResourceUsage>>(path("sessions", sessionId, "resource_usage"), {
      query: { limit: 20, ...(page ? { page } : {}) },
      signal,
    }),
  workers: (client: Anthropic, signal: AbortSignal) => client.get<WorkerRoster>(path("workers"), { signal }),
  /** Hints that the workspace's sessions (and so its approvals) may have changed (no data: read again when told). */
  sessionHints: (client: Anthropic, signal: AbortSignal) =>
    client.get<Stream<{ type: string }>>(path("sessions", "stream"), { stream: true, signal }),
};
