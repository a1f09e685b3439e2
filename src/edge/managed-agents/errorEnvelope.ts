import type { FastifyReply, FastifyRequest } from "fastify";
import type { ErrorCategory } from "../../kernel/errors.js";
import { defaultErrorBody } from "../http/defaultErrorBody.js";
import type { EdgeFailure } from "../http/edgeFailure.js";

// Codes the SDK turns into dedicated error classes through `error.details.error_code` (wire §1.4).
const SDK_ERROR_CODES = new Set([
  "environment_archived",
  "invalid_config_type_change",
  "invalid_metadata",
  "environment_not_found",
  "storage_quota_exceeded",
  "file_not_downloadable",
  "file_expired",
]);

/**
 * The wire's error type per category (wire §1.4). The SDK picks its exception class from the
 * status; `request_too_large` is what it names a 413, `overloaded_error` a 503.
 */
const WIRE_TYPES: Record<ErrorCategory, string> = {
  invalid: "invalid_request_error",
  unauthenticated: "authentication_error",
  forbidden: "permission_error",
  not_found: "not_found_error",
  conflict: "conflict_error",
  precondition_failed: "invalid_request_error",
  unprocessable: "invalid_request_error",
  too_large: "request_too_large",
  internal: "api_error",
  unavailable: "overloaded_error",
  rate_limited: "rate_limit_error",
};

/** Codes with an error type of their own on the wire (the SDK's memory error objects). */
const CODE_WIRE_TYPES: Readonly<Record<string, string>> = {
  memory_precondition_failed: "memory_precondition_failed_error",
  memory_path_conflict: "memory_path_conflict_error",
};

/** Codes whose details the SDK reads as fields of the error object itself (`conflicting_path`). */
const TOP_LEVEL_DETAILS = new Set(["memory_path_conflict"]);

export const errorBody = defaultErrorBody;

/**
 * Codes that may succeed later, but not within the SDK's own retries (two, within seconds): an
 * image build takes minutes, so the caller gets the answer at once and decides when to come back.
 */
const RETRIED_LATER_NOT_AT_ONCE = new Set(["image_build_not_ready"]);

/**
 * Whether the official SDK may repeat the call on its own (`x-should-retry`, which it obeys before
 * its status rules; it retries 409s by default): a deterministic failure, or one that holds for
 * minutes, says not to.
 */
export function sdkMayRetry(failure: Pick<EdgeFailure, "code" | "retryable">): boolean {
  return failure.retryable && !RETRIED_LATER_NOT_AT_ONCE.has(failure.code);
}

/** Answers a failure in the wire's envelope; nothing leaves as an HTML page or a stack. */
export function answerManagedError(failure: EdgeFailure, request: FastifyRequest, reply: FastifyReply): void {
  if (!sdkMayRetry(failure)) reply.header("x-should-retry", "false");
  reply.status(failure.status).send(managedErrorBody(failure, request.id));
}

/** A failure's body on the wire; the in-process client builds the SDK's error classes from it too. */
export function managedErrorBody(failure: EdgeFailure, requestId: string) {
  // The SDK picks its error class from `error.details.error_code`, so a code it knows is always
  // present, even when the error carries other details (e.g. the validation issues).
  const details = SDK_ERROR_CODES.has(failure.code)
    ? { ...failure.details, error_code: failure.code }
    : failure.details;
  const type = CODE_WIRE_TYPES[failure.code] ?? WIRE_TYPES[failure.category];
  const body = errorBody(type, failure.message, requestId, details);
  return TOP_LEVEL_DETAILS.has(failure.code) ? { ...body, error: { ...body.error, ...details } } : body;
}
