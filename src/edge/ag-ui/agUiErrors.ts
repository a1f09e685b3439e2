import type { FastifyReply, FastifyRequest } from "fastify";
import { AwakenError } from "../../kernel/errors.js";

/** A failure before the run's stream opened, as the server's shared error handling describes it. */
export interface AgUiFailure {
  status: number;
  category: string;
  code: string;
  message: string;
  retryable: boolean;
  details?: Record<string, unknown>;
}

/**
 * Before RUN_STARTED there is no stream to carry a RUN_ERROR, so a failure is an HTTP error with a
 * small JSON body; the official client rejects the run with `HTTP <status>: <body>`.
 */
export function answerAgUiError(failure: AgUiFailure, _request: FastifyRequest, reply: FastifyReply): void {
  void reply
    .status(failure.status)
    .type("application/json")
    .send({ error: { type: failure.category, code: failure.code, message: failure.message } });
}

/** The failure an error thrown before the stream opened stands for. */
export function failureOf(error: unknown): AgUiFailure {
  if (error instanceof AwakenError) {
    return {
      status: error.status,
      category: error.wireType,
      code: error.code,
      message: error.message,
      retryable: error.retryable,
    };
  }
  const status = (error as { statusCode?: unknown }).statusCode;
  if (error instanceof SyntaxError || (typeof status === "number" && status >= 400 && status < 500)) {
    const code = (error as { code?: unknown }).code;
    return {
      status: typeof status === "number" ? status : 400,
      category: "invalid_request_error",
      code: typeof code === "string" ? code : "invalid_request",
      message:
        error instanceof SyntaxError ? "The request body is not valid JSON." : (error as Error).message,
      retryable: false,
    };
  }
  return {
    status: 500,
    category: "api_error",
    code: "internal",
    message: "The request failed on the server; try again.",
    retryable: true,
  };
}
