import type { FastifyReply, FastifyRequest } from "fastify";
import type { EdgeFailure } from "../http/edgeFailure.js";

/** JSON-RPC 2.0's reserved codes, and the implementation-defined one the MCP SDK uses for transport refusals. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;
const INTERNAL_ERROR = -32603;

/**
 * What fails before the MCP SDK sees a request (authentication, a body that is not JSON, an
 * unknown session) is a JSON-RPC error response with no id, under the failure's HTTP status. A
 * 401 names the scheme in `WWW-Authenticate`: the workspace API key as a bearer token.
 */
export function answerMcpError(failure: EdgeFailure, _request: FastifyRequest, reply: FastifyReply): void {
  if (failure.status === 401) reply.header("www-authenticate", 'Bearer realm="awaken"');
  void reply
    .status(failure.status)
    .type("application/json")
    .send(jsonRpcError(codeOf(failure), failure.message, { type: failure.category, code: failure.code }));
}

export function jsonRpcError(code: number, message: string, data?: Record<string, unknown>) {
  return { jsonrpc: "2.0", id: null, error: { code, message, ...(data ? { data } : {}) } };
}

function codeOf(failure: EdgeFailure): number {
  if (failure.category === "internal") return INTERNAL_ERROR;
  if (failure.code === "invalid_request" && /not valid JSON|nests|field name/.test(failure.message)) {
    return PARSE_ERROR;
  }
  if (failure.category === "invalid" || failure.category === "too_large") return INVALID_REQUEST;
  return SERVER_ERROR;
}
