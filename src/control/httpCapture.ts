// What a credential validation reports of an HTTP answer it got (wire §5 `http_response`): status,
// content type and the body, scrubbed of every secret the request carried and truncated. Shared by
// the MCP probe and the token endpoint exchange.

import { scrub, secretForms } from "../kernel/secretScrub.js";

/** An HTTP answer as the wire reports it: never a secret, at most `BODY_LIMIT_BYTES` of body. */
export interface CapturedHttpResponse {
  statusCode: number;
  contentType: string;
  /** Scrubbed (every secret the request carried replaced by `[redacted]`), maybe truncated. */
  body: string;
  bodyTruncated: boolean;
}

/** The most of a body a report carries (UTF-8 bytes). */
export const BODY_LIMIT_BYTES = 4096;
/** The most of a body read at all; the rest is never downloaded. */
export const READ_LIMIT_BYTES = 64 * 1024;

/**
 * Reads at most `limit` bytes of a body, then cancels the rest. `complete` is false when the body
 * was longer. Honors the request's abort signal (a timed-out read throws).
 */
export async function readCapped(
  response: Response,
  limit: number = READ_LIMIT_BYTES,
): Promise<{ bytes: Buffer; complete: boolean }> {
  if (!response.body) return { bytes: Buffer.alloc(0), complete: true };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: Buffer.concat(chunks), complete: true };
      chunks.push(Buffer.from(value));
      size += value.byteLength;
      if (size > limit) return { bytes: Buffer.concat(chunks).subarray(0, limit), complete: false };
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/**
 * The report of one answer: `raw` is the part of the body that was read (`complete` false when there
 * was more). Scrubbing runs on the whole read text before truncation, and a read cut short first
 * drops a tail as long as the longest secret form, so no prefix of a secret can survive either cut.
 */
export function capture(
  response: Pick<Response, "status" | "headers">,
  raw: Buffer,
  complete: boolean,
  secrets: readonly string[],
): CapturedHttpResponse {
  let text = raw.toString("utf8");
  if (!complete) {
    const longest = secretForms(secrets)[0]?.length ?? 0;
    text = text.slice(0, Math.max(0, text.length - longest));
  }
  const scrubbed = scrub(text, secrets);
  const { body, truncated } = truncateUtf8(scrubbed, BODY_LIMIT_BYTES);
  return {
    statusCode: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body,
    bodyTruncated: truncated || !complete,
  };
}

function truncateUtf8(text: string, limit: number): { body: string; truncated: boolean } {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= limit) return { body: text, truncated: false };
  let body = bytes.subarray(0, limit).toString("utf8");
  // A character cut in half decodes to U+FFFD: drop it rather than report a character never sent.
  if (body.endsWith("\uFFFD")) body = body.slice(0, -1);
  return { body, truncated: true };
}
