import type { FastifyReply, FastifyRequest } from "fastify";
import type { EdgeFailure } from "../http/edgeFailure.js";

/**
 * The AI SDK client shows a failed response's body text as the chat's error message, so a refusal
 * is that human message as plain text, under the failure's status.
 */
export function answerAiSdkError(failure: EdgeFailure, _request: FastifyRequest, reply: FastifyReply): void {
  if (!failure.retryable) reply.header("x-should-retry", "false");
  reply.code(failure.status).type("text/plain; charset=utf-8").send(failure.message);
}
