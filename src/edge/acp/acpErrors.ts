import { RequestError } from "@agentclientprotocol/sdk";
import Anthropic from "@anthropic-ai/sdk";

/** Where the adapter reports what the editor is not shown (stderr: stdout carries only protocol). */
export type DiagnosticLog = (message: string) => void;

/** The server's own message of a refused request, without the SDK's status prefix. */
function serverMessage(error: InstanceType<typeof Anthropic.APIError>): string {
  const body = error.error as { error?: { message?: unknown } } | undefined;
  const message = body?.error?.message;
  return typeof message === "string" ? message : `the server answered ${error.status ?? "an error"}`;
}

/**
 * Any failure of a handler as the JSON-RPC error the editor gets: the server's refusals keep its
 * message (they are about the editor's input or this key), anything else is logged here and
 * answered as an internal error without its details.
 */
export function requestErrorOf(error: unknown, log: DiagnosticLog): RequestError {
  if (error instanceof RequestError) return error;
  if (error instanceof Anthropic.APIConnectionError) {
    return RequestError.internalError(undefined, "cannot reach the Awaken server");
  }
  if (error instanceof Anthropic.APIError) {
    const message = serverMessage(error);
    if (error.status === 401 || error.status === 403) return RequestError.authRequired(undefined, message);
    if (error.status === 404) return new RequestError(-32002, `Resource not found: ${message}`);
    if (error.status !== undefined && error.status >= 400 && error.status < 500) {
      return RequestError.invalidParams(undefined, message);
    }
    log(`the server failed: ${message}`);
    return RequestError.internalError(undefined, message);
  }
  log(`unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return RequestError.internalError();
}
