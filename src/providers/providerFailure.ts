/**
 * One place that decides how a failed model call is classified, so the Anthropic and OpenAI
 * providers give the runtime's retry policy the same answers for the same failures.
 */
import { ProviderError } from "./ports.js";

export interface ProviderFailure {
  provider: string;
  /** HTTP status; undefined when the connection failed or the stream broke after the headers. */
  status: number | undefined;
  /** The provider's error type from the body or SSE error event, e.g. `overloaded_error`. */
  errorType: string | null | undefined;
  /** The provider's own human message, without any SDK decoration. */
  message: string;
  cause: unknown;
}

export function classifyFailure(failure: ProviderFailure): ProviderError {
  const { provider, status, errorType, cause } = failure;
  const detail = describe(failure);
  if (status === 529 || errorType === "overloaded_error") {
    return new ProviderError("overloaded", `${provider} is overloaded (${detail})`, {
      transient: true,
      status,
      cause,
    });
  }
  if (status === 429 || errorType === "rate_limit_error") {
    return new ProviderError("rate_limited", `${provider} rate limited the request (${detail})`, {
      transient: true,
      status,
      cause,
    });
  }
  // No status means the connection failed or the stream died after it started: the same request
  // may well succeed on another attempt.
  const transient = status === undefined || status >= 500 || status === 408;
  return new ProviderError("request_failed", `${provider} request failed (${detail})`, {
    transient,
    status,
    cause,
  });
}

export function abortedError(provider: string, cause?: unknown): ProviderError {
  return new ProviderError("aborted", `${provider} request was aborted`, { transient: false, cause });
}

/** A stream that ended without its terminal event was cut off (proxy, network, server crash). */
export function truncatedStreamError(provider: string): ProviderError {
  return new ProviderError("request_failed", `${provider} stream ended before the response was complete`, {
    transient: true,
  });
}

function describe({ status, errorType, message }: ProviderFailure): string {
  const head = [status === undefined ? undefined : `HTTP ${status}`, errorType].filter(Boolean).join(" ");
  if (!head) return message || "no details";
  return message ? `${head}: ${message}` : head;
}

/** Reads `.message` from an unknown error body without trusting its shape. */
export function messageOf(value: unknown): string | undefined {
  if (typeof value === "object" && value !== null && "message" in value) {
    const message = (value as { message: unknown }).message;
    if (typeof message === "string") return message;
  }
  return undefined;
}
