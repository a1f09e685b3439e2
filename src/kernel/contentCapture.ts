import { invalid } from "./errors.js";

/**
 * Content capture in traces: whether a run's spans may carry what was said (the last user turn, the
 * answer, tool arguments and results). It is the least of three things, and any one of them
 * absent or false means no:
 * - the operator's ceiling, `AWAKEN_TRACE_CONTENT=on` on the process that executes runs (off by
 *   default);
 * - the request, session metadata `awaken_capture_content: "telemetry"`;
 * - the consent of the data subject the session names (`content_capture_telemetry`), read at each
 *   claim, so a withdrawal takes effect at the next claim. A session that names no subject needs no
 *   consent: there is nobody recorded to consent.
 * The coordinator decides request ∧ consent per claim (`Activation.captureContent`); the worker
 * adds its own ceiling (`recordsContent`).
 */

/** The session metadata key that asks for content capture, and the one value it takes. */
export const CAPTURE_CONTENT_METADATA_KEY = "awaken_capture_content";
export const CAPTURE_CONTENT_TELEMETRY = "telemetry";
/** The consent purpose capture needs from a session's data subject. */
export const CONTENT_CAPTURE_PURPOSE = "content_capture_telemetry";
/** The operator's ceiling: `on` or `off` (the default). */
export const TRACE_CONTENT_ENV = "AWAKEN_TRACE_CONTENT";

/** The most one captured attribute holds (UTF-8 bytes); longer content is cut and marked. */
export const MAX_CAPTURED_BYTES = 16 * 1024;
export const TRUNCATED_MARKER = "…[truncated]";

/** What a session's metadata asks for, validated: true when it requests capture. */
export function captureRequestedBy(metadata: Record<string, string>): boolean {
  const value = metadata[CAPTURE_CONTENT_METADATA_KEY];
  if (value === undefined) return false;
  if (value !== CAPTURE_CONTENT_TELEMETRY)
    throw invalid(
      `metadata[${JSON.stringify(CAPTURE_CONTENT_METADATA_KEY)}]: expected "${CAPTURE_CONTENT_TELEMETRY}" (the only allowed value), got ${JSON.stringify(value)}`,
    );
  return true;
}

/** The operator's ceiling from the environment; any value other than `on`, `off` or unset is refused. */
export function traceContentCeiling(env: NodeJS.ProcessEnv): boolean {
  const value = env[TRACE_CONTENT_ENV];
  if (value === undefined || value === "" || value === "off") return false;
  if (value === "on") return true;
  throw new Error(`${TRACE_CONTENT_ENV} must be "on" or "off" (default off), got ${JSON.stringify(value)}`);
}

/** What a claim found on the session: it asked for capture, naming this data subject (or none). */
export interface CaptureRequest {
  dataSubject: string | null;
}

/**
 * The consent port the coordinator reads (Control's `ConsentService`, in process or over the link):
 * only `consented`, so any object with that async method serves.
 */
export interface CaptureConsents {
  consented(
    workspaceId: string,
    subjectId: string,
    purpose: typeof CONTENT_CAPTURE_PURPOSE,
  ): Promise<boolean>;
}

/**
 * The coordinator's half, per claim: request ∧ consent. Only a session that requested capture and
 * names a subject costs a consent lookup; a lookup that fails captures nothing (the run goes on).
 */
export async function claimCapturesContent(
  workspaceId: string,
  request: CaptureRequest | null | undefined,
  consents: CaptureConsents | undefined,
): Promise<boolean> {
  if (!request) return false;
  if (request.dataSubject === null) return true;
  if (!consents) return false;
  try {
    return await consents.consented(workspaceId, request.dataSubject, CONTENT_CAPTURE_PURPOSE);
  } catch {
    return false;
  }
}

/** The worker's half: its own ceiling ∧ the claim's decision. */
export function recordsContent(ceiling: boolean | undefined, captureContent: boolean | undefined): boolean {
  return ceiling === true && captureContent === true;
}

/**
 * JSON of `build(text)` at most `MAX_CAPTURED_BYTES` long: when it is longer, `text` is cut (never
 * inside a surrogate pair) and ends with `TRUNCATED_MARKER`.
 */
export function cappedJson(text: string, build: (text: string) => unknown): string {
  return JSON.stringify(build(cut(text, (t) => bytes(JSON.stringify(build(t))))));
}

/** `text` at most `MAX_CAPTURED_BYTES` long, cut and marked like `cappedJson`. */
export function cappedText(text: string): string {
  return cut(text, bytes);
}

function cut(text: string, size: (text: string) => number): string {
  if (size(text) <= MAX_CAPTURED_BYTES) return text;
  const marked = (keep: number) => {
    // Never half a surrogate pair.
    const end = keep > 0 && isHighSurrogate(text.charCodeAt(keep - 1)) ? keep - 1 : keep;
    return text.slice(0, end) + TRUNCATED_MARKER;
  };
  // The longest prefix that fits, by bisection; every character takes at least a byte, so no
  // more than MAX_CAPTURED_BYTES characters can (a huge text costs no more than a short one).
  let fits = 0;
  let over = Math.min(text.length, MAX_CAPTURED_BYTES) + 1;
  while (over - fits > 1) {
    const mid = (fits + over) >>> 1;
    if (size(marked(mid)) <= MAX_CAPTURED_BYTES) fits = mid;
    else over = mid;
  }
  return marked(fits);
}

const bytes = (text: string) => Buffer.byteLength(text, "utf8");
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
