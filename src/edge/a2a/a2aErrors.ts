import type { FastifyReply, FastifyRequest } from "fastify";
import type { EdgeFailure } from "../http/edgeFailure.js";
import { writeRestError } from "./restErrors.js";

const PARSE_ERROR = -32700;
const INVALID_PARAMS = -32602;
const INVALID_REQUEST = -32600;
const INTERNAL_ERROR = -32603;

/** The JSON-RPC code of a refusal made before the handler ran; its HTTP status says the rest (401, 404, 413). */
function codeOf(failure: EdgeFailure): number {
  if (failure.category === "internal" || failure.category === "unavailable") return INTERNAL_ERROR;
  return failure.category === "invalid" ? INVALID_PARAMS : INVALID_REQUEST;
}

/** A JSON-RPC error response (HTTP 200: the envelope carries the error). */
export function writeRpcError(reply: FastifyReply, id: unknown, code: number, message: string): void {
  void reply
    .status(200)
    .type("application/json")
    .send({
      jsonrpc: "2.0",
      id: typeof id === "string" || typeof id === "number" ? id : null,
      error: { code, message },
    });
}

/**
 * What fails before the JSON-RPC handler runs. On the interface a body that is not JSON is a parse
 * error and other refusals keep their HTTP status with a JSON-RPC envelope (the official client
 * reads both); the card and the paths around it answer with the status and a small JSON body.
 */
export function answerA2aError(failure: EdgeFailure, request: FastifyRequest, reply: FastifyReply): void {
  if (REST_PATH.test(request.url)) {
    if (failure.status === 401) reply.header("www-authenticate", 'Bearer realm="awaken"');
    writeRestError(reply, failure.status, restStatusName(failure.status), failure.message);
    return;
  }
  const rpc = request.method === "POST";
  if (
    rpc &&
    failure.code === "invalid_request" &&
    failure.message.startsWith("Request body is not valid JSON")
  ) {
    writeRpcError(reply, null, PARSE_ERROR, failure.message);
    return;
  }
  if (rpc) {
    void reply
      .status(failure.status)
      .type("application/json")
      .send({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: codeOf(failure),
          message: failure.message,
        },
      });
    return;
  }
  void reply
    .status(failure.status)
    .type("application/json")
    .send({ error: { type: failure.category, code: failure.code, message: failure.message } });
}

/** Paths of an agent's HTTP+JSON interface, whose errors have that binding's shape. */
const REST_PATH = /^\/v1\/a2a\/agents\/[^/?]+\/rest(?:[/?]|$)/;

/** The google.rpc status name the REST error body carries beside the HTTP status. */
function restStatusName(status: number): string {
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403) return "PERMISSION_DENIED";
  if (status === 404) return "NOT_FOUND";
  if (status === 409) return "ALREADY_EXISTS";
  if (status === 413 || status === 429) return "RESOURCE_EXHAUSTED";
  if (status === 503) return "UNAVAILABLE";
  if (status >= 500) return "INTERNAL";
  return "INVALID_ARGUMENT";
}
