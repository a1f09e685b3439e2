import type { DomainInput, SendDedupe } from "../../coordinator/domainInputs.js";
import { bodyDedupeKey } from "../../coordinator/sessionService.js";

/**
 * How long a repeated send is matched against the previous one. It covers the SDK's retry schedule
 * including its 600 s request timeout; an identical retry after that is taken as new input.
 */
export const SEND_RETRY_WINDOW_MS = 11 * 60_000;

/**
 * When a `POST /v1/sessions/{id}/events` is a repeat (wire §1.4). A client that sends an
 * `Idempotency-Key` gets deduplication by key: the same key with the same body returns the original
 * echo, the same key with another body is refused. Otherwise the SDK retries POSTs without a key and
 * marks retries with `X-Stainless-Retry-Count > 0`: a retry whose body equals the session's most
 * recent send returns that send's echo. A first attempt is always new input, even when it repeats
 * an earlier message word for word.
 */
export function sendDedupe(
  headers: Record<string, string | string[] | undefined>,
  inputs: readonly DomainInput[],
): SendDedupe | undefined {
  const key = headers["idempotency-key"];
  if (typeof key === "string" && key.trim() !== "")
    return { key: `idempotency-key:${key.trim()}`, strict: true, windowMs: SEND_RETRY_WINDOW_MS };
  const retryCount = Number(headers["x-stainless-retry-count"] ?? 0) || 0;
  if (retryCount > 0) return { key: bodyDedupeKey(inputs), strict: false, windowMs: SEND_RETRY_WINDOW_MS };
  return undefined;
}
