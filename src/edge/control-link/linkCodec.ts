import { AwakenError, ERROR_CODES, type ErrorCode } from "../../kernel/errors.js";

/**
 * How values cross the private Control↔Coordinator link: JSON, with the two things JSON loses
 * marked explicitly. Buffers (custody's opened material) travel as base64 and come back as
 * Buffers; an argument left undefined stays undefined (an optional version is not `null`).
 * Values carry clients' free-form JSON (a tool's input schema, a tool's input): an object of theirs
 * that looks like a mark is escaped, so no client can make the other side see a Buffer.
 */
const BUFFER = "$awaken_buffer";
const UNDEFINED = "$awaken_undefined";
const ESCAPED = "$awaken_escaped";
const MARKS = [BUFFER, UNDEFINED, ESCAPED];

/** The marks this side made while encoding: never escaped themselves. */
const made = new WeakSet<object>();

function mark(key: string, value: unknown): object {
  const marked = { [key]: value };
  made.add(marked);
  return marked;
}

export function encodeArgs(args: readonly unknown[]): string {
  return JSON.stringify(
    args.map((arg) => (arg === undefined ? mark(UNDEFINED, true) : arg)),
    replacer,
  );
}

export function decodeArgs(body: unknown): unknown[] {
  if (!Array.isArray(body))
    throw new AwakenError("invalid_request", "the link's body must be an argument list");
  return body.map((arg) => (isMarked(arg, UNDEFINED) ? undefined : revive(arg)));
}

export function encodeResult(value: unknown): string {
  return JSON.stringify({ result: value === undefined ? null : value }, replacer);
}

export function decodeResult(body: unknown): unknown {
  return revive((body as { result?: unknown } | null)?.result ?? null);
}

/** What an AwakenError says on the link: the same code, message, details and retryability. */
export interface LinkError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  retryable: boolean;
}

export function encodeError(error: AwakenError): { error: LinkError } {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      retryable: error.retryable,
    },
  };
}

/** The peer's error as the same AwakenError; a code this side does not know is an internal error. */
export function decodeError(body: unknown, status: number): AwakenError {
  const error = (body as { error?: Partial<LinkError> } | null)?.error;
  if (!error || typeof error.code !== "string" || !(error.code in ERROR_CODES)) {
    return new AwakenError("unavailable", `the peer answered ${status} without a usable error`, {
      retryable: true,
    });
  }
  return new AwakenError(error.code as ErrorCode, String(error.message ?? error.code), {
    ...(error.details ? { details: error.details } : {}),
    retryable: error.retryable === true,
  });
}

function replacer(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  if (Buffer.isBuffer(original)) return mark(BUFFER, original.toString("base64"));
  // Someone else's object shaped like a mark travels wrapped; its contents are encoded as usual.
  if (!made.has(this as object) && !made.has(value as object) && MARKS.some((m) => isMarked(value, m))) {
    return mark(ESCAPED, value);
  }
  return value;
}

function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (value === null || typeof value !== "object") return value;
  if (isMarked(value, BUFFER))
    return Buffer.from(String((value as Record<string, unknown>)[BUFFER]), "base64");
  const source = isMarked(value, ESCAPED) ? (value as Record<string, object>)[ESCAPED]! : value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) out[k] = revive(v);
  return out;
}

function isMarked(value: unknown, key: string): boolean {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    key in value
  );
}
