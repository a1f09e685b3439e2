import type { FastifyError, FastifyRequest } from "fastify";
import { AwakenError, type ErrorCategory } from "../../kernel/errors.js";

/**
 * A failure as every edge sees it, whatever raised it: the category and the HTTP status it has on
 * an HTTP edge, the product's stable code and a message safe to show the caller.
 */
export interface EdgeFailure {
  status: number;
  category: ErrorCategory;
  code: string;
  message: string;
  retryable: boolean;
  details?: Record<string, unknown>;
}

/** The HTTP status of each category; an edge that speaks HTTP answers with it. */
export const CATEGORY_STATUS: Record<ErrorCategory, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  unprocessable: 422,
  internal: 500,
  unavailable: 503,
  rate_limited: 429,
};

/** Fastify's own 4xx errors, worded for the caller (what to send instead) rather than the framework. */
const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "Send the request body as JSON (content-type: application/json).",
  FST_ERR_CTP_INVALID_TYPE: "The content-type header must be a single string such as application/json.",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "The request body's size does not match its content-length header.",
  FST_ERR_CTP_EMPTY_JSON_BODY: "The request body is empty; send a JSON object or no content-type header.",
};

/**
 * Classifies anything a route threw. Unexpected errors are logged here with the request id and
 * leave as a generic internal failure: no stack, no message that could carry a secret.
 */
export function classifyFailure(error: unknown, request: FastifyRequest): EdgeFailure {
  if (error instanceof AwakenError) {
    return {
      status: CATEGORY_STATUS[error.category],
      category: error.category,
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      ...(error.details ? { details: error.details } : {}),
    };
  }
  const fe = error as FastifyError;
  if (fe?.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    const limit = request.routeOptions.bodyLimit;
    return failure(
      "too_large",
      "payload_too_large",
      `Request body exceeds the maximum allowed size of ${limit} bytes.`,
    );
  }
  const framework = FRAMEWORK_MESSAGES[fe?.code ?? ""];
  if (framework) return failure("invalid", "invalid_request", framework);
  if (error instanceof SyntaxError || fe?.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
    const message = error instanceof Error ? error.message : "";
    return failure(
      "invalid",
      "invalid_request",
      `Request body is not valid JSON: ${jsonErrorWithoutInput(message)}`,
    );
  }
  if (typeof fe?.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { ...failure("invalid", "invalid_request", fe.message), status: fe.statusCode };
  }
  request.log.error({ err: error }, "unhandled error");
  return {
    ...failure(
      "internal",
      "internal",
      `Internal server error. Quote request id ${request.id} when reporting it.`,
    ),
    retryable: true,
  };
}

function failure(category: ErrorCategory, code: string, message: string): EdgeFailure {
  return { status: CATEGORY_STATUS[category], category, code, message, retryable: false };
}

/**
 * V8's JSON errors quote a slice of the input (`Unexpected token 's', ..."{"token": sk-…"... is not
 * valid JSON`). A body may carry a credential secret, so such a message is not passed on; the
 * position-style ones (`… in JSON at position 21`) quote nothing and are kept.
 */
function jsonErrorWithoutInput(message: string): string {
  return /is not valid JSON$/.test(message) ? "unexpected token (the input is not quoted back)" : message;
}
