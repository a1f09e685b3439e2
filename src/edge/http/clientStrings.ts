import { AwakenError } from "../../kernel/errors.js";

/**
 * Rules every string a client names or sends meets, on every edge. PostgreSQL text cannot hold
 * U+0000 and SQLite can, so a NUL is refused where it enters: both backends answer the same 400,
 * never one storing it and the other failing with a 500.
 */
export const NUL_MESSAGE = "contains a NUL character (U+0000), which no field accepts; remove it";

export function hasNul(text: string): boolean {
  return text.includes("\0");
}

/** The 400 for a NUL in `field` (already rendered as the caller would write it). */
export function nulError(field: string): AwakenError {
  return new AwakenError("invalid_request", `${field}: ${NUL_MESSAGE}`, {
    details: { issues: [{ path: field, message: NUL_MESSAGE }] },
  });
}

/**
 * Names that reach an object's prototype when a client's name is used as a key (`out[key][sub] = v`
 * on a plain object writes `Object.prototype` for `__proto__`).
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export function isPrototypeKey(key: string): boolean {
  return PROTOTYPE_KEYS.has(key);
}

/** A client's name inside a message: as is when plain, JSON-quoted when it holds anything odd. */
export function quotedName(name: string): string {
  return /^[\w.[\]-]+$/.test(name) ? name : JSON.stringify(name);
}

/** How a query parameter is named in a message, as every query error names it: `created_at[gte]`. */
export function queryParamField(name: string): string {
  return quotedName(name);
}
