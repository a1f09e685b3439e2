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
  /** The endpoint called (no credentials or query: see `endpointUrl`), named in the message. */
  url?: string;
  /** The provider key: replaced in the message should any cause quote it. */
  secret?: string;
}

export function classifyFailure(failure: ProviderFailure): ProviderError {
  const { status, errorType, cause } = failure;
  const detail = redacted(describe(failure), failure.secret);
  const provider = failure.url ? `${failure.provider} at ${failure.url}` : failure.provider;
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

/**
 * Where a request went, for an error message: the base URL joined with the path, without user
 * info, query or fragment (a base URL is operator configuration and could carry either).
 */
export function endpointUrl(baseURL: string, path: string): string {
  try {
    const url = new URL(`${baseURL.replace(/\/+$/, "")}${path}`);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "(an invalid base URL)";
  }
}

/**
 * Why a connection failed, from the SDK's generic "Connection error." down its `cause` chain to
 * the system error (`connect ECONNREFUSED 127.0.0.1:1`, `getaddrinfo ENOTFOUND host`, a TLS
 * alert): the innermost message, with its code when the message does not already hold it.
 */
export function connectionCause(error: unknown): string {
  let innermost: unknown = error;
  for (let depth = 0, next = causeOf(error); next !== undefined && depth < 8; depth++, next = causeOf(next)) {
    innermost = next;
  }
  if (!(innermost instanceof Error)) return String(innermost);
  const code = (innermost as { code?: unknown }).code;
  // The first line only: OpenSSL's messages go on with source locations.
  const message = (innermost.message || innermost.name).split("\n")[0] ?? "";
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}

function causeOf(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return undefined;
  // Happy-eyeballs connects fail with an AggregateError of one error per address tried.
  if (error instanceof AggregateError && error.errors.length > 0) return error.errors[0];
  return (error as { cause?: unknown }).cause;
}

/** The key, and user info of any URL the text quotes (a base URL may carry a password). */
function redacted(text: string, secret: string | undefined): string {
  const keyless = secret && secret.length >= 4 ? text.split(secret).join("[redacted]") : text;
  return keyless.replace(/\/\/[^/\s@]+@/g, "//[redacted]@");
}

/** The SDK's connection-error message, with its cause when the message does not already say it. */
export function connectionFailureMessage(error: Error): string {
  const cause = connectionCause(error);
  const head = error.message.replace(/\.$/, "");
  return head.includes(cause) ? head : `${head}: ${cause}`;
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
