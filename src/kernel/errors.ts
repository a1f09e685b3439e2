/**
 * What kind of failure an error is, independent of any protocol. Each edge maps a category to its
 * own wire (an HTTP status and error type, an SSE error event, a JSON-RPC code).
 */
export type ErrorCategory =
  | "invalid"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "precondition_failed"
  | "unprocessable"
  | "too_large"
  | "internal"
  | "unavailable"
  /** A limit the operator set for the workspace (a quota): the same call may pass later. */
  | "rate_limited";

/**
 * Every error the product raises on purpose carries a stable code; the table gives each code its
 * category. Codes are what clients and tests key on; categories are what edges translate.
 */
export const ERROR_CODES = {
  invalid_request: "invalid",
  invalid_metadata: "invalid",
  invalid_config_type_change: "invalid",
  environment_archived: "invalid",
  agent_archived: "invalid",
  session_terminated: "invalid",
  // Session budgets: each rejection reason is its own code (`error.details.error_code` says it).
  budget_create_only: "invalid",
  budget_not_raised: "invalid",
  model_not_budgetable: "invalid",
  tool_use_not_pending: "invalid",
  vault_archived: "invalid",
  credential_archived: "invalid",
  credential_immutable_field: "invalid",
  memory_store_archived: "invalid",
  tunnel_archived: "invalid",
  // A request names (`anthropic-user-profile-id`) a user profile that is unknown, deleted or another
  // workspace's: a 400 the SDK maps to `UserProfileNotFoundError` through `error.details.error_code`.
  user_profile_not_found: "invalid",
  unauthenticated: "unauthenticated",
  permission_denied: "forbidden",
  not_found: "not_found",
  environment_not_found: "not_found",
  version_mismatch: "conflict",
  session_running: "conflict",
  // An erasure asked for while one of the subject's sessions has a run executing.
  data_subject_busy: "conflict",
  publication_conflict: "conflict",
  // Another live credential in the vault already serves this MCP server URL / environment variable.
  credential_usage_conflict: "conflict",
  // A stored credential revision does not open on this server (sealed under a key it lacks, or
  // tampered with): the server's configuration, never the client's request, so not internal either.
  credential_unopenable: "conflict",
  // Memories: a content precondition that no longer holds; a path taken or overlapped by another
  // memory; a store at its memory count limit; a version that still holds a memory's content.
  memory_precondition_failed: "conflict",
  memory_path_conflict: "conflict",
  memory_store_full: "conflict",
  memory_version_current: "conflict",
  // Dreams: another `update_existing` dream on the same memory store has not ended.
  dream_store_held: "conflict",
  // An Idempotency-Key repeated with another body: a retry cannot change the answer.
  idempotency_key_reused: "unprocessable",
  payload_too_large: "too_large",
  // Files: the SDK turns each into its own error class through `error.details.error_code`.
  storage_quota_exceeded: "invalid",
  file_not_downloadable: "invalid",
  file_expired: "not_found",
  // Self-hosted work queue: a lost lease or failed heartbeat precondition is final for that delivery.
  heartbeat_precondition_failed: "precondition_failed",
  work_lease_lost: "precondition_failed",
  work_stopped: "conflict",
  work_state_conflict: "conflict",
  // Image builds: a settle, renewal or release from a build worker that no longer holds the lease.
  image_build_lease_lost: "conflict",
  image_build_not_failed: "conflict",
  // A session of a revision whose derived image is not built (yet, or at all): retry once ready.
  image_build_not_ready: "conflict",
  internal: "internal",
  unavailable: "unavailable",
  // A workspace quota the operator set refuses new work; the message names the limit.
  quota_exceeded: "rate_limited",
} as const satisfies Record<string, ErrorCategory>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * The base of every error the platform raises on purpose: a stable `code` that logs, metrics and
 * tests key on, and whether repeating the same call may succeed. Only `AwakenError` (its codes are
 * the table above) reaches a client as itself; an edge answers any other error as internal.
 */
export class PlatformError<Code extends string = string> extends Error {
  readonly code: Code;
  /** Whether repeating the same call may succeed; deterministic failures say no (the default). */
  readonly retryable: boolean;

  constructor(code: Code, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

export class AwakenError extends PlatformError<ErrorCode> {
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; retryable?: boolean; cause?: unknown } = {},
  ) {
    const category = ERROR_CODES[code];
    super(code, message, {
      retryable: options.retryable ?? (category === "internal" || category === "unavailable"),
      cause: options.cause,
    });
    this.name = "AwakenError";
    this.details = options.details;
  }

  get category(): ErrorCategory {
    return ERROR_CODES[this.code];
  }
}

export function notFound(kind: string, id: string): AwakenError {
  return new AwakenError("not_found", `${kind} ${JSON.stringify(id)} was not found in this workspace.`);
}

export function invalid(message: string, details?: Record<string, unknown>): AwakenError {
  return new AwakenError("invalid_request", message, details ? { details } : {});
}
