import type { FastifyReply, FastifyRequest } from "fastify";
import type { EdgeFailure } from "../http/edgeFailure.js";

/**
 * Before RUN_STARTED there is no stream to carry a RUN_ERROR, so a failure is an HTTP error with a
 * small JSON body; the official client rejects the run with `HTTP <status>: <body>`.
 */
export function answerAgUiError(failure: EdgeFailure, _request: FastifyRequest, reply: FastifyReply): void {
  void reply
    .status(failure.status)
    .type("application/json")
    .send({ error: { type: failure.category, code: failure.code, message: failure.message } });
}
