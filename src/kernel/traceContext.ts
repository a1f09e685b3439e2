/**
 * W3C Trace Context (`traceparent`, `tracestate`) read strictly: a header that is not exactly the
 * standard's form is ignored (the request starts a new trace), never an error. A valid pair is kept
 * as one opaque string (`<traceparent>[ <tracestate>]`): the form stored with a run and handed back
 * by its claim.
 */

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);
/** The standard's limits: 32 list members, 512 characters worth propagating. */
const MAX_TRACESTATE_LENGTH = 512;
const MAX_TRACESTATE_MEMBERS = 32;
const TRACESTATE_MEMBER =
  /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

export interface ParsedTraceContext {
  traceId: string;
  spanId: string;
  /** The trace flags byte (bit 0: sampled). */
  flags: number;
  tracestate: string | null;
}

/** A `traceparent` value, or null when it is not one (wrong length, case, version, all-zero ids). */
export function parseTraceparent(value: string): Omit<ParsedTraceContext, "tracestate"> | null {
  const match = TRACEPARENT.exec(value);
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  // Version 00 is exactly 55 characters; "ff" is forbidden; later versions may append fields.
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return null;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/** A `tracestate` value as the standard writes it, or null (it is then dropped, the parent kept). */
export function parseTracestate(value: string): string | null {
  if (value.length === 0 || value.length > MAX_TRACESTATE_LENGTH) return null;
  const members = value
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return null;
  return members.every((m) => TRACESTATE_MEMBER.test(m)) ? members.join(",") : null;
}

/**
 * The trace context an HTTP request carries, as the stored form; null when its `traceparent` is
 * absent, repeated or malformed. A malformed `tracestate` alone is dropped.
 */
export function traceContextFromHeaders(
  traceparent: string | string[] | undefined,
  tracestate: string | string[] | undefined,
): string | null {
  if (typeof traceparent !== "string") return null;
  const parent = parseTraceparent(traceparent);
  if (!parent) return null;
  const state = typeof tracestate === "string" ? parseTracestate(tracestate) : null;
  return encodeTraceContext({ ...parent, tracestate: state });
}

export function encodeTraceContext(context: ParsedTraceContext): string {
  const flags = (context.flags & 0xff).toString(16).padStart(2, "0");
  const traceparent = `00-${context.traceId}-${context.spanId}-${flags}`;
  return context.tracestate ? `${traceparent} ${context.tracestate}` : traceparent;
}

/** The stored form back, checked again (null when it is not one). */
export function decodeTraceContext(stored: string): ParsedTraceContext | null {
  const space = stored.indexOf(" ");
  const parent = parseTraceparent(space < 0 ? stored : stored.slice(0, space));
  if (!parent) return null;
  return { ...parent, tracestate: space < 0 ? null : parseTracestate(stored.slice(space + 1)) };
}

/** The stored form as the two headers an outgoing request continues the trace with. */
export function traceHeaders(stored: string): { traceparent: string; tracestate?: string } {
  const space = stored.indexOf(" ");
  if (space < 0) return { traceparent: stored };
  return { traceparent: stored.slice(0, space), tracestate: stored.slice(space + 1) };
}
