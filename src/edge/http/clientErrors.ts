import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { newId } from "../../kernel/ids.js";
import { defaultErrorBody as errorBody } from "./defaultErrorBody.js";

/** What Node's HTTP parser refused, by its error code: status, wire type and what to fix. */
const PARSER_ERRORS: Record<string, { status: number; type: string; message: string }> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    type: "invalid_request_error",
    message: "The request line and headers are too large; send smaller headers.",
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    type: "timeout_error",
    message: "The request was not received in time.",
  },
  HPE_INVALID_CONTENT_LENGTH: {
    status: 400,
    type: "invalid_request_error",
    message: "The content-length header is not a valid length.",
  },
  HPE_UNEXPECTED_CONTENT_LENGTH: {
    status: 400,
    type: "invalid_request_error",
    message: "The content-length header is repeated or conflicts with transfer-encoding.",
  },
};

const MALFORMED = {
  status: 400,
  type: "invalid_request_error",
  message: "The request is not valid HTTP/1.1.",
};

/**
 * Node's `clientError`: the request never reached Fastify (headers too large, a bad content-length,
 * bytes that are not HTTP), so there is no reply object; the envelope is written to the socket.
 */
export function writeClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  // A response already on its way on this connection must not be corrupted by a second one.
  const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const { status, type, message } = PARSER_ERRORS[error.code ?? ""] ?? MALFORMED;
  const requestId = newId("req");
  const body = JSON.stringify(errorBody(type, message, requestId));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `request-id: ${requestId}\r\n` +
      "connection: close\r\n\r\n" +
      body,
    () => socket.destroy(),
  );
}

/** Fastify's router errors, raised before any hook runs (so `request-id` is set here). */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const [status, message] =
    error.code === "FST_ERR_MAX_PARAM_LENGTH"
      ? [414, "A path segment of the URL is too long."]
      : error.code === "FST_ERR_BAD_URL"
        ? [400, "The URL path is not valid percent-encoding; encode a literal % as %25."]
        : [400, "The request URL is not valid."];
  reply
    .header("request-id", request.id)
    .status(status)
    .send(errorBody("invalid_request_error", message, request.id));
}
