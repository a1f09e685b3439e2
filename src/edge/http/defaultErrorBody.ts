/**
 * The error body of the server's first protocol (the Managed Agents envelope), used where no
 * adapter can be known yet: bytes that are not HTTP, a URL the router cannot parse.
 */
export function defaultErrorBody(
  type: string,
  message: string,
  requestId: string,
  details?: Record<string, unknown>,
) {
  return { type: "error", error: { type, message, ...(details ? { details } : {}) }, request_id: requestId };
}
