/**
 * One pass over a JSON text, before it is parsed, for what a body must never carry: nesting deeper
 * than a limit (deep values overflow the stack of every recursive walker after the parse, such as
 * `structuredClone`, zod or a JSON Schema compiler), keys that rewrite prototypes when a value is
 * later merged with `Object.assign` or a naive deep merge (`__proto__`, `constructor.prototype`),
 * and, when asked, a NUL character in any string, key or value (PostgreSQL text cannot hold one).
 *
 * Iterative and allocation-light: the text may be tens of megabytes and nested 100 000 levels deep.
 * Syntax is not checked here; a text this scan accepts still goes through `JSON.parse`.
 */

export interface JsonTextProblem {
  /** Where the problem is, as keys and array indexes from the root (`["tools", 0, "input_schema"]`). */
  path: Array<string | number>;
  kind: "too_deep" | "forbidden_key" | "nul_character";
  /** For `nul_character`: the NUL is in the key the path ends with, not in a value. */
  inKey?: boolean;
}

export interface JsonTextScanOptions {
  /** Report a `\u0000` escape in any string (a raw NUL is a syntax error `JSON.parse` reports). */
  refuseNul?: boolean;
}

interface Frame {
  isObject: boolean;
  /** The key being read or whose value is being read (objects). */
  key: string | undefined;
  /** The index of the element being read (arrays). */
  index: number;
  expectingKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

const NUL_ESCAPE = "\\u0000";

/** The first problem in `text`, or null. `maxDepth` counts containers: `{}` is depth 1, `{"a":[]}` 2. */
export function scanJsonText(
  text: string,
  maxDepth: number,
  options: JsonTextScanOptions = {},
): JsonTextProblem | null {
  const frames: Frame[] = [];
  // The next `\u0000` in the text: found once, so a body without one pays a single indexOf.
  let nul = options.refuseNul === true ? text.indexOf(NUL_ESCAPE) : -1;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return null; // unterminated: JSON.parse reports it
      const top = frames[frames.length - 1];
      const inKey = top?.isObject === true && top.expectingKey;
      if (inKey) {
        top.key = decodeKey(text, i, end);
        top.expectingKey = false;
        if (isForbiddenKey(frames, top.key)) return { path: pathOf(frames), kind: "forbidden_key" };
      }
      while (nul >= 0 && nul < end) {
        if (nul > i && isEscapeStart(text, nul)) {
          return { path: pathOf(frames), kind: "nul_character", ...(inKey ? { inKey } : {}) };
        }
        nul = text.indexOf(NUL_ESCAPE, nul + 1);
      }
      i = end + 1;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (frames.length >= maxDepth) return { path: pathOf(frames), kind: "too_deep" };
      frames.push({ isObject: c === OPEN_BRACE, key: undefined, index: 0, expectingKey: c === OPEN_BRACE });
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      frames.pop();
    } else if (c === COMMA) {
      const top = frames[frames.length - 1];
      if (top?.isObject) top.expectingKey = true;
      else if (top) top.index += 1;
    }
    i += 1;
  }
  return null;
}

/** Index of the quote that closes the string opening at `start`, or -1. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** True when the backslash at `at` starts an escape: an even run of backslashes precedes it. */
function isEscapeStart(text: string, at: number): boolean {
  let before = 0;
  while (text.charCodeAt(at - 1 - before) === BACKSLASH) before += 1;
  return before % 2 === 0;
}

/** A key as `JSON.parse` will see it: `"\u005f_proto__"` is `__proto__`. */
function decodeKey(text: string, start: number, end: number): string {
  const raw = text.slice(start + 1, end);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return raw; // a bad escape: JSON.parse of the whole body reports it
  }
}

/** The keys Fastify's own JSON parser refuses: `__proto__` anywhere, `prototype` inside `constructor`. */
function isForbiddenKey(frames: readonly Frame[], key: string): boolean {
  if (key === "__proto__") return true;
  if (key !== "prototype") return false;
  const parent = frames[frames.length - 2];
  return parent?.isObject === true && parent.key === "constructor";
}

function pathOf(frames: readonly Frame[]): Array<string | number> {
  const path: Array<string | number> = [];
  for (const frame of frames) {
    if (!frame.isObject) path.push(frame.index);
    else if (frame.key !== undefined) path.push(frame.key);
  }
  return path;
}
