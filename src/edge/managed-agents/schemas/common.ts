/**
 * Request validation plumbing shared by every Managed Agents schema: parsing entry points that turn
 * zod failures into one `AwakenError` whose message names the field and what to fix, query-string
 * normalisation (wire §1.3), and the schema pieces several resources share.
 */
import { z } from "zod";
import { AwakenError, type ErrorCode } from "../../../kernel/errors.js";
import { metadataProblems } from "../../../kernel/metadata.js";
import { hasNul, isPrototypeKey, nulError, queryParamField } from "../../http/clientStrings.js";
import { formatPath, type PathStyle } from "../../http/fieldPath.js";

// ---------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------

/** A short, safe rendering of a rejected value for an error message. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  if (typeof value === "object") return "an object";
  return String(value);
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "an array",
  record: "an object",
  null: "null",
};

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

function plural(n: number | bigint, word: string): string {
  return `${n} ${word}${n === 1 || n === 1n ? "" : "s"}`;
}

function sizeOf(input: unknown): string {
  if (typeof input === "string") return ` (got ${input.length})`;
  if (Array.isArray(input)) return ` (got ${input.length})`;
  return "";
}

/**
 * The default wording for every issue a schema did not word itself. Runs with the raw issue, which is
 * the only place zod exposes the rejected input.
 */
function wireErrorMap(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "is required";
      return `expected ${EXPECTED[issue.expected] ?? issue.expected}, got ${describeValue(issue.input)}`;
    case "too_small": {
      const min = issue.minimum;
      if (issue.origin === "string") {
        return min === 1 ? "must not be empty" : `must be at least ${plural(min, "character")}`;
      }
      if (issue.origin === "array" || issue.origin === "set")
        return `must contain at least ${plural(min, "item")}`;
      return issue.inclusive === false ? `must be greater than ${min}` : `must be at least ${min}`;
    }
    case "too_big": {
      const max = issue.maximum;
      if (issue.origin === "string")
        return `must be at most ${plural(max, "character")}${sizeOf(issue.input)}`;
      if (issue.origin === "array" || issue.origin === "set") {
        return `must contain at most ${plural(max, "item")}${sizeOf(issue.input)}`;
      }
      return issue.inclusive === false ? `must be less than ${max}` : `must be at most ${max}`;
    }
    case "invalid_value":
      return issue.values.length === 1
        ? `expected ${quoteList(issue.values)}, got ${describeValue(issue.input)}`
        : `expected one of ${quoteList(issue.values)}; got ${describeValue(issue.input)}`;
    case "invalid_format":
      if (issue.format === "datetime") return timestampMessage;
      return `has an invalid format (${issue.format})`;
    case "invalid_union":
      if (issue.discriminator !== undefined && issue.errors.length === 0) {
        return discriminatorMessage(issue.input, issue.discriminator, discriminatorOptions(issue));
      }
      return "does not match any accepted form";
    case "invalid_key":
      return "has an invalid key";
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    default:
      return undefined;
  }
}

/** The accepted discriminator values; zod puts them on the issue but not in its declared type. */
function discriminatorOptions(issue: object): readonly unknown[] {
  const options: unknown = Reflect.get(issue, "options");
  return Array.isArray(options) ? options : [];
}

function discriminatorMessage(input: unknown, key: string, options: readonly unknown[], noun = key): string {
  const value =
    typeof input === "object" && input !== null ? (input as Record<string, unknown>)[key] : undefined;
  if (value === undefined) return `is required; expected one of ${quoteList(options)}`;
  return `unknown ${noun} ${describeValue(value)}; expected one of ${quoteList(options)}`;
}

/**
 * Schema-level error for a discriminated union, so the message names the thing (`unknown event type
 * "user.foo"; expected one of …`). Issues raised by the matched member keep their own wording.
 */
export function discriminatorError(noun: string) {
  return (issue: z.core.$ZodRawIssue): string | undefined => {
    if (issue.code !== "invalid_union" || issue.discriminator === undefined || issue.errors.length > 0) {
      return undefined;
    }
    return discriminatorMessage(issue.input, issue.discriminator, discriminatorOptions(issue), noun);
  };
}

/** `betas` and `workspace_id` are SDK params, but the SDK sends them as headers (wire §1.1). */
const HEADER_PARAMS: ReadonlyMap<string, string> = new Map([
  ["betas", "anthropic-beta"],
  ["workspace_id", "anthropic-workspace-id"],
]);

function unknownFieldMessage(key: string, style: PathStyle): string {
  // A map, not an object: the client names `key`, and `constructor` must not find Object's.
  const header = HEADER_PARAMS.get(key);
  if (header) return `unknown field; send it as the ${header} header instead`;
  return style === "query" ? "unknown query parameter" : "unknown field; remove it";
}

interface FlatIssue {
  path: PropertyKey[];
  message: string;
  code: ErrorCode;
}

/** Marks an issue as a metadata-rule failure, so the error carries `invalid_metadata` (wire §1.4). */
const METADATA_PARAMS = { awakenCode: "invalid_metadata" } as const;

/** True when a union branch failed on the value's own type, i.e. the input was meant for another branch. */
function branchMismatched(branch: readonly z.core.$ZodIssue[]): boolean {
  return branch.some((i) => i.path.length === 0 && (i.code === "invalid_type" || i.code === "invalid_value"));
}

function flatten(issue: z.core.$ZodIssue, prefix: PropertyKey[], style: PathStyle, out: FlatIssue[]): void {
  const path = [...prefix, ...issue.path];
  if (issue.code === "unrecognized_keys") {
    for (const key of issue.keys) {
      out.push({ path: [...path, key], message: unknownFieldMessage(key, style), code: "invalid_request" });
    }
    return;
  }
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // Report the branch the caller evidently meant (the one whose type matched), not "invalid input".
    const meant = issue.errors.filter((branch) => !branchMismatched(branch));
    const best = meant.sort((a, b) => a.length - b.length)[0];
    if (best) {
      for (const inner of best) flatten(inner, path, style, out);
      return;
    }
  }
  const awakenCode = issue.code === "custom" ? issue.params?.awakenCode : undefined;
  out.push({
    path,
    message: issue.message,
    code: awakenCode === "invalid_metadata" ? "invalid_metadata" : "invalid_request",
  });
}

function parseWith<S extends z.ZodType>(schema: S, value: unknown, style: PathStyle): z.output<S> {
  const result = schema.safeParse(value, { error: wireErrorMap });
  if (result.success) return result.data;
  const flat: FlatIssue[] = [];
  for (const issue of result.error.issues) flatten(issue, [], style, flat);
  const render = (i: FlatIssue) =>
    i.path.length > 0 ? `${formatPath(i.path, style)}: ${i.message}` : i.message;
  const first = flat[0] ?? { path: [], message: "is invalid", code: "invalid_request" as const };
  const more = flat.length > 1 ? ` (and ${plural(flat.length - 1, "more problem")})` : "";
  throw new AwakenError(first.code, `${render(first)}${more}`, {
    details: { issues: flat.map((i) => ({ path: formatPath(i.path, style), message: i.message })) },
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Validates a JSON request body. Throws `AwakenError` (`invalid_request` or `invalid_metadata`). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (!isPlainObject(body)) throw new AwakenError("invalid_request", "Request body must be a JSON object");
  return parseWith(schema, body, "body");
}

// ---------------------------------------------------------------------------------------------------
// Query strings (wire §1.3)
// ---------------------------------------------------------------------------------------------------

/** What an HTTP framework hands over: repeated keys already collected into arrays. */
export type RawQuery = Record<string, string | string[] | undefined>;
export type QueryValue = string | string[] | { [key: string]: string | string[] };
export type NormalizedQuery = Record<string, QueryValue>;

const BRACKETED = /^([^[\]]+)\[([^[\]]*)\]$/;

function append(existing: QueryValue | undefined, values: string[]): string[] {
  if (existing === undefined) return values;
  if (typeof existing === "string") return [existing, ...values];
  if (Array.isArray(existing)) return [...existing, ...values];
  return values; // `key=x` next to `key[sub]=y`: the scalar wins and the schema reports the shape
}

/**
 * A query name a client may use: no part of it (`a`, `b` and `c` of `a[b][c]`) names a prototype,
 * and no NUL anywhere in the name or its values (the rule of every client string).
 */
function checkQueryParam(rawKey: string, values: readonly string[]): void {
  const field = queryParamField(rawKey);
  const named = rawKey.split(/[[\]]/).find(isPrototypeKey);
  if (named !== undefined) {
    const message = `the name ${JSON.stringify(named)} is not accepted (it names an object's prototype); rename the parameter`;
    throw new AwakenError("invalid_request", `${field}: ${message}`, {
      details: { issues: [{ path: field, message }] },
    });
  }
  if (hasNul(rawKey) || values.some(hasNul)) throw nulError(field);
}

/**
 * Folds the SDK's query encoding into plain values: `key[]=a&key[]=b` and repeated `key=a&key=b`
 * become `key: ["a","b"]` (a lone `key[]` is still an array); `created_at[gte]=…` becomes
 * `created_at: {gte: …}`. Empty values are dropped: the SDK serialises a `null` param such as
 * `page: null` as `page=`, which means "not set". Booleans and numbers stay strings; the schemas
 * convert them (`queryBoolean`, `queryInt`). The client names the keys, so every object made here
 * has no prototype, and a name that reaches one is refused rather than folded.
 */
export function normalizeQuery(raw: RawQuery): NormalizedQuery {
  const out: NormalizedQuery = Object.create(null);
  for (const [rawKey, rawValue] of Object.entries(raw)) {
    if (rawValue === undefined) continue;
    const given = Array.isArray(rawValue) ? rawValue : [rawValue];
    checkQueryParam(rawKey, given);
    const values = given.filter((v) => v !== "");
    if (values.length === 0) continue;
    const match = BRACKETED.exec(rawKey);
    const key = match?.[1];
    const sub = match?.[2];
    if (key === undefined || sub === undefined) {
      const existing = out[rawKey];
      out[rawKey] =
        existing === undefined && values.length === 1 ? (values[0] as string) : append(existing, values);
    } else if (sub === "") {
      out[key] = append(out[key], values);
    } else {
      const existing = out[key];
      const nested: Record<string, string | string[]> = isPlainObject(existing)
        ? existing
        : Object.create(null);
      const previous = nested[sub];
      nested[sub] =
        previous === undefined && values.length === 1 ? (values[0] as string) : append(previous, values);
      if (existing === undefined || isPlainObject(existing)) out[key] = nested;
    }
  }
  return out;
}

/** Normalises then validates a query string. Throws `AwakenError("invalid_request")`. */
export function parseQuery<S extends z.ZodType>(
  schema: S,
  rawQuery: RawQuery | null | undefined,
): z.output<S> {
  return parseWith(schema, normalizeQuery(rawQuery ?? {}), "query");
}

/** `true`/`false` only (wire §1.3); `1`, `yes` and friends are rejected rather than guessed at. */
export const queryBoolean = z
  .enum(["true", "false"], { error: 'expected "true" or "false"' })
  .transform((v) => v === "true");

/** A decimal integer in a query string, range-checked. */
export function queryInt(min: number, max: number = Number.MAX_SAFE_INTEGER) {
  const message =
    max === Number.MAX_SAFE_INTEGER
      ? `expected an integer ≥ ${min}`
      : `expected an integer between ${min} and ${max}`;
  return z.string({ error: message }).transform((text, ctx) => {
    const n = Number(text);
    if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) {
      ctx.issues.push({ code: "custom", message: `${message}, got ${describeValue(text)}`, input: text });
      return z.NEVER;
    }
    return n;
  });
}

/** A repeated parameter: a lone plain `key=a` is accepted as `[a]`. */
export function queryArray<T extends z.ZodType>(item: T) {
  return z.preprocess((v) => (typeof v === "string" ? [v] : v), z.array(item));
}

export const RFC3339_EXAMPLE = "2026-01-01T00:00:00Z";
const timestampMessage = `expected an RFC 3339 timestamp such as ${RFC3339_EXAMPLE}`;
/** Wire §2: timestamps are RFC 3339 strings, which always carry an offset (`Z` or `±hh:mm`). */
export const timestampSchema = z.iso.datetime({ offset: true, error: timestampMessage });

/** `created_at[gte]`/`created_at[lte]` (agents list). */
export const createdAtInclusiveRange = z.strictObject({
  gte: timestampSchema.optional(),
  lte: timestampSchema.optional(),
});
/** `created_at[gt|gte|lt|lte]` (sessions and events lists). */
export const createdAtRange = z.strictObject({
  gt: timestampSchema.optional(),
  gte: timestampSchema.optional(),
  lt: timestampSchema.optional(),
  lte: timestampSchema.optional(),
});

export const PAGE_LIMIT = { min: 1, max: 1000, default: 20 } as const;
/** PageCursor params (wire §1.5); spread into a list query's shape. The tool runner sends `limit=1000`. */
export const paginationQuery = {
  limit: queryInt(PAGE_LIMIT.min, PAGE_LIMIT.max).default(PAGE_LIMIT.default),
  page: z.string().optional(),
};

export function orderQuery(defaultOrder: "asc" | "desc") {
  return z.enum(["asc", "desc"]).default(defaultOrder);
}

// ---------------------------------------------------------------------------------------------------
// Shared body pieces
// ---------------------------------------------------------------------------------------------------

/** A string whose length is checked, with one message for every way it can be wrong. */
export function boundedString(min: number, max: number) {
  const range = min === 0 ? `at most ${max}` : `${min}-${max}`;
  const message = `expected a string of ${range} characters`;
  const error = (issue: z.core.$ZodRawIssue) =>
    issue.input === undefined
      ? `is required; ${message}`
      : typeof issue.input === "string"
        ? `${message} (got ${issue.input.length})`
        : `${message}, got ${describeValue(issue.input)}`;
  return z.string({ error }).min(min, { error }).max(max, { error });
}

/**
 * Bounds of a free-form JSON field (a value whose inner shape the API does not define, such as a
 * tool's `input_schema`): nesting, counted from the field, and size as UTF-8 JSON. The request body
 * as a whole is bounded before parsing (edge/http/jsonBodyParser.ts); these make the promise per field.
 */
export const FREE_FORM_JSON_LIMITS = { depth: 32, bytes: 64 * 1024 } as const;

/** Containers on the deepest path of a parsed JSON value (`{}` is 1), counting no further than `stopAfter`. */
export function jsonDepth(value: unknown, stopAfter: number): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > stopAfter) return deepest;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** Refinement for a free-form JSON field: a 400 naming the field when it is too deep or too large. */
export function checkFreeFormJson(value: unknown, ctx: z.core.$RefinementCtx<unknown>): void {
  const { depth, bytes } = FREE_FORM_JSON_LIMITS;
  if (jsonDepth(value, depth) > depth) {
    ctx.addIssue({ code: "custom", message: `nests more than ${depth} levels deep; flatten it` });
    return;
  }
  const size = Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
  if (size > bytes) {
    ctx.addIssue({ code: "custom", message: `is ${size} bytes as JSON; at most ${bytes} are accepted` });
  }
}

/** An id or name that must be present: any non-empty string. */
export const requiredString = z.string().min(1);

function checkMetadata(allowNull: boolean) {
  return (value: unknown, ctx: z.core.$RefinementCtx<unknown>): void => {
    const expected = allowNull
      ? "expected an object mapping keys to strings (or null to delete a key)"
      : "expected an object mapping keys to strings";
    if (!isPlainObject(value)) {
      ctx.addIssue({
        code: "custom",
        message: `${expected}, got ${describeValue(value)}`,
        params: METADATA_PARAMS,
      });
      return;
    }
    const checked: Record<string, string | null> = {};
    for (const [key, entry] of Object.entries(value)) {
      if (typeof entry === "string" || (allowNull && entry === null)) checked[key] = entry;
      else {
        const what = allowNull ? "a string, or null to delete the key" : "a string";
        ctx.addIssue({
          code: "custom",
          message: `expected ${what}, got ${describeValue(entry)}`,
          path: [key],
          params: METADATA_PARAMS,
        });
      }
    }
    for (const problem of metadataProblems(checked)) {
      ctx.addIssue({
        code: "custom",
        message: problem.message,
        path: problem.key === undefined ? [] : [problem.key],
        params: METADATA_PARAMS,
      });
    }
  };
}

/**
 * Metadata on create (wire §2): ≤16 keys, keys 1-64 characters, values ≤512 characters. A failure
 * carries error code `invalid_metadata`, which the SDK maps to its own error class (wire §1.4).
 */
export const metadataSchema = z.custom<Record<string, string>>().superRefine(checkMetadata(false));

/**
 * Metadata patch on update: a string upserts, `null` deletes (environments also delete on `""`; that
 * is applied by `applyMetadataPatch`). At most 16 upserts, since more could never fit; the merged
 * result is checked again when the patch is applied.
 */
export const metadataPatchSchema = z.custom<Record<string, string | null>>().superRefine(checkMetadata(true));

export { formatPath };
