import type { FastifyError, FastifyInstance } from "fastify";
import { AwakenError, ERROR_CODES } from "../../kernel/errors.js";

// Codes the SDK turns into dedicated error classes through `error.details.error_code` (wire §1.4).
const SDK_ERROR_CODES = new Set([
  "environment_archived",
  "invalid_config_type_change",
  "invalid_metadata",
  "environment_not_found",
]);

/** Fastify's own 4xx errors, worded for the caller (what to send instead) rather than the framework. */
const FRAMEWORK_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "Send the request body as JSON (content-type: application/json).",
  FST_ERR_CTP_INVALID_TYPE: "The content-type header must be a single string such as application/json.",
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: "The request body's size does not match its content-length header.",
  FST_ERR_CTP_EMPTY_JSON_BODY: "The request body is empty; send a JSON object or no content-type header.",
};

export function errorBody(
  type: string,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
) {
  return { type: "error", error: { type, message, ...(details ? { details } : {}) }, request_id: requestId };
}

/**
 * Maps every failure to the wire's error envelope (§1.4); nothing leaves as an HTML page or a stack.
 * `allowedMethods` names the methods a path does answer, so a wrong method is a 405, not a 404.
 */
export function installErrorEnvelope(app: FastifyInstance, allowedMethods: (path: string) => string[]): void {
  app.setErrorHandler((error: FastifyError | AwakenError | Error, request, reply) => {
    if (error instanceof AwakenError) {
      // The SDK picks its error class from `error.details.error_code`, so a code it knows is always
      // present, even when the error carries other details (e.g. the validation issues).
      const details = SDK_ERROR_CODES.has(error.code)
        ? { ...error.details, error_code: error.code }
        : error.details;
      if (!error.retryable) reply.header("x-should-retry", "false");
      return reply.status(error.status).send(errorBody(error.wireType, error.message, request.id, details));
    }
    const fe = error as FastifyError;
    if (fe.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      const limit = request.routeOptions.bodyLimit;
      return reply
        .status(ERROR_CODES.payload_too_large.status)
        .send(
          errorBody(
            ERROR_CODES.payload_too_large.type,
            `Request body exceeds the maximum allowed size of ${limit} bytes.`,
            request.id,
          ),
        );
    }
    const framework = FRAMEWORK_MESSAGES[fe.code];
    if (framework) {
      return reply.status(400).send(errorBody("invalid_request_error", framework, request.id));
    }
    if (error instanceof SyntaxError || fe.code === "FST_ERR_CTP_INVALID_JSON_BODY") {
      return reply
        .status(400)
        .send(
          errorBody(
            "invalid_request_error",
            `Request body is not valid JSON: ${jsonErrorWithoutInput(error.message)}`,
            request.id,
          ),
        );
    }
    if (typeof fe.statusCode === "number" && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.status(fe.statusCode).send(errorBody("invalid_request_error", error.message, request.id));
    }
    request.log.error({ err: error }, "unhandled error");
    return reply
      .status(500)
      .send(
        errorBody(
          "api_error",
          `Internal server error. Quote request id ${request.id} when reporting it.`,
          request.id,
        ),
      );
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      return reply
        .status(405)
        .header("allow", allowed.join(", "))
        .send(
          errorBody(
            "invalid_request_error",
            `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}.`,
            request.id,
          ),
        );
    }
    return reply
      .status(404)
      .send(errorBody("not_found_error", `No route for ${request.method} ${path}.`, request.id));
  });
}

/**
 * V8's JSON errors quote a slice of the input (`Unexpected token 's', ..."{"token": sk-…"... is not
 * valid JSON`). A body may carry a credential secret, so such a message is not passed on; the
 * position-style ones (`… in JSON at position 21`) quote nothing and are kept.
 */
function jsonErrorWithoutInput(message: string): string {
  return /is not valid JSON$/.test(message) ? "unexpected token (the input is not quoted back)" : message;
}
