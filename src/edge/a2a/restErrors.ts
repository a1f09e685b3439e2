import { restStatusFor, toRestErrorBody } from "@a2a-js/sdk/errors";
import type { FastifyReply } from "fastify";

const CONTENT_TYPE = "application/a2a+json";

/** The HTTP status of a failure on the HTTP+JSON binding (A2A errors map by kind; others are 500). */
export const restStatusOf = (error: unknown): number => restStatusFor(error);

/**
 * The binding's error body, `{error: {code, status, message, details}}`, which the official client
 * turns back into its typed errors. What reaches here was already guarded: an unexpected failure
 * carries only a request id, never its own message.
 */
export const restErrorBodyOf = (error: unknown): unknown => toRestErrorBody(error, restStatusFor(error));

/** A refusal made before the handler ran (unknown path, wrong verb, missing key, unreadable body). */
export function writeRestError(reply: FastifyReply, code: number, status: string, message: string): void {
  void reply
    .status(code)
    .type(CONTENT_TYPE)
    .send({ error: { code, status, message, details: [] } });
}
