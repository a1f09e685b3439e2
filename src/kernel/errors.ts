/**
 * Every error the product raises on purpose carries a stable code. The table below is the one place
 * that maps a code to its HTTP status and wire error type; edges only read it.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, type: "invalid_request_error" },
  invalid_metadata: { status: 400, type: "invalid_request_error" },
  invalid_config_type_change: { status: 400, type: "invalid_request_error" },
  environment_archived: { status: 400, type: "invalid_request_error" },
  agent_archived: { status: 400, type: "invalid_request_error" },
  session_terminated: { status: 400, type: "invalid_request_error" },
  tool_use_not_pending: { status: 400, type: "invalid_request_error" },
  vault_archived: { status: 400, type: "invalid_request_error" },
  credential_archived: { status: 400, type: "invalid_request_error" },
  credential_immutable_field: { status: 400, type: "invalid_request_error" },
  unauthenticated: { status: 401, type: "authentication_error" },
  permission_denied: { status: 403, type: "permission_error" },
  not_found: { status: 404, type: "not_found_error" },
  environment_not_found: { status: 404, type: "not_found_error" },
  version_mismatch: { status: 409, type: "conflict_error" },
  session_running: { status: 409, type: "conflict_error" },
  publication_conflict: { status: 409, type: "conflict_error" },
  // Another live credential in the vault already serves this MCP server URL / environment variable.
  credential_usage_conflict: { status: 409, type: "conflict_error" },
  // A stored credential revision does not open on this server (sealed under a key it lacks, or
  // tampered with): the server's configuration, never the client's request, so not a 500 either.
  credential_unopenable: { status: 409, type: "conflict_error" },
  // An Idempotency-Key repeated with another body. 422, not 409: the SDK retries 409s, and a
  // retry cannot change the answer (the IETF Idempotency-Key draft also answers 422 here).
  idempotency_key_reused: { status: 422, type: "invalid_request_error" },
  // The wire's type for an oversized request (the SDK raises ContentTooLargeError on 413).
  payload_too_large: { status: 413, type: "request_too_large" },
  // Self-hosted work queue (wire §2.8, §4). The SDK picks BetaHeartbeatPreconditionFailedError from
  // "412 heartbeat_precondition_failed"; a lost lease is a 412 too, so the SDK's runners give up on
  // it instead of retrying (they retry 409s); a stopped item answers 409 with x-should-retry: false.
  heartbeat_precondition_failed: { status: 412, type: "invalid_request_error" },
  work_lease_lost: { status: 412, type: "invalid_request_error" },
  work_stopped: { status: 409, type: "conflict_error" },
  work_state_conflict: { status: 409, type: "conflict_error" },
  internal: { status: 500, type: "api_error" },
  unavailable: { status: 503, type: "overloaded_error" },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class AwakenError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  /** Deterministic failures tell the SDK not to retry (it retries 409 by default). */
  readonly retryable: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; retryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AwakenError";
    this.code = code;
    this.details = options.details;
    this.retryable = options.retryable ?? ERROR_CODES[code].status >= 500;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get wireType(): string {
    return ERROR_CODES[this.code].type;
  }
}

export function notFound(kind: string, id: string): AwakenError {
  return new AwakenError("not_found", `${kind} ${JSON.stringify(id)} was not found in this workspace.`);
}

export function invalid(message: string, details?: Record<string, unknown>): AwakenError {
  return new AwakenError("invalid_request", message, details ? { details } : {});
}
