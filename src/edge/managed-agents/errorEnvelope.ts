import type { FastifyError, FastifyInstance } from "fastify";
import { AwakenError } from "../../kernel/errors.js";

// Codes the SDK turns into dedicated error classes through `error.details.error_code` (wire §1.4).
const SDK_ERROR_CODES = new Set([
  "environment_archived",
  "invalid_config_type_change",
  "invalid_metadata",
  "environment_not_found",
]);

export function errorBody(
  type: string,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
) {
  return { type: "error", error: { type, message, ...(details ? { details } : {}) }, request_id: requestId };
}

/** Maps every failure to the wire's error envelope (§1.4); nothing leaves as an HTML page or a stack. */
export function installErrorEnvelope(app: FastifyInstance): void {
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
      return reply
        .status(413)
        .send(errorBody("invalid_request_error", "Request body is too large.", request.id));
    }
    if (fe.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      return reply
        .status(400)
        .send(
          errorBody(
            "invalid_request_error",
            "Send the request body as JSON (content-type: application/json).",
            request.id,
          ),
        );
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
    reply
      .status(404)
      .send(
        errorBody(
          "not_found_error",
          `No route for ${request.method} ${request.url.split("?")[0]}.`,
          request.id,
        ),
      );
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
