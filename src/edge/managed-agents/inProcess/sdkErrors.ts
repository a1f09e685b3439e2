import Anthropic from "@anthropic-ai/sdk";
import { AwakenError } from "../../../kernel/errors.js";
import { newId } from "../../../kernel/ids.js";
import { CATEGORY_STATUS, type EdgeFailure } from "../../http/edgeFailure.js";
import { managedErrorBody, sdkMayRetry } from "../errorEnvelope.js";

/** Where an unexpected failure is logged (with its request id); its message never reaches the caller. */
export type FailureLog = (requestId: string, error: unknown) => void;

/** The SDK's own status → class mapping (and `error_code` classes) lives on its client: reuse it. */
class ErrorClasses extends Anthropic {
  fromBody(status: number, body: object, headers: Headers): InstanceType<typeof Anthropic.APIError> {
    return this.makeStatusError(status, body, undefined, headers);
  }
}

let classes: ErrorClasses | null = null;

/**
 * A failure of an in-process call as the official SDK would have thrown it over HTTP: the same
 * class (`Anthropic.NotFoundError`, …), status, body and `request-id` header, so code written
 * against `client.beta` catches it unchanged. Unexpected errors leave as a generic 500.
 */
export function toSdkError(error: unknown, log: FailureLog): Error {
  if (error instanceof Anthropic.APIError) return error;
  const requestId = newId("req");
  const failure = classify(error, requestId);
  if (failure.category === "internal" && !(error instanceof AwakenError)) log(requestId, error);
  const headers = new Headers({ "request-id": requestId });
  if (!sdkMayRetry(failure)) headers.set("x-should-retry", "false");
  classes ??= new ErrorClasses({ apiKey: "in-process", baseURL: "http://in-process.invalid" });
  return classes.fromBody(failure.status, managedErrorBody(failure, requestId), headers);
}

function classify(error: unknown, requestId: string): EdgeFailure {
  if (error instanceof AwakenError) {
    return {
      status: CATEGORY_STATUS[error.category],
      category: error.category,
      code: error.code,
      message: error.message,
      retryable: error.retryable,
      ...(error.details ? { details: error.details } : {}),
    };
  }
  return {
    status: CATEGORY_STATUS.internal,
    category: "internal",
    code: "internal",
    message: `Internal server error. Quote request id ${requestId} when reporting it.`,
    retryable: true,
  };
}
