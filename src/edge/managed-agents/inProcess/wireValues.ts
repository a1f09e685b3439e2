import { parseJsonBodyText } from "../../http/jsonBodyParser.js";
import type { RawQuery } from "../schemas/common.js";

/** Params the SDK sends as headers, not in the body or query; in process they mean nothing. */
const HEADER_PARAMS = new Set(["betas", "workspace_id"]);

function withoutHeaderParams(params: object | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params ?? {})) if (!HEADER_PARAMS.has(key)) out[key] = value;
  return out;
}

/**
 * A request body as the SDK would send it: serialised (dropping `undefined`, applying `toJSON`)
 * and parsed back through the HTTP body parser, so an in-process body meets the same limits and
 * refusals as one over HTTP and shares no object with the caller.
 */
export function wireBody(params: object | null | undefined): unknown {
  return parseJsonBodyText(JSON.stringify(withoutHeaderParams(params)));
}

/**
 * Query params as the SDK encodes them (`qs`, brackets): `key[]=a` for arrays, `key[sub]=v` for
 * objects, `true`/`false`, numbers as text; `null` and `undefined` are not set. The route schemas
 * then read them exactly as they read a URL's query.
 */
export function wireQuery(params: object | null | undefined): RawQuery {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(withoutHeaderParams(params))) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) out[`${key}[]`] = value.map(String);
    else if (typeof value === "object") {
      for (const [sub, inner] of Object.entries(value as Record<string, unknown>))
        if (inner !== undefined && inner !== null) out[`${key}[${sub}]`] = String(inner);
    } else out[key] = String(value);
  }
  return out;
}

/** A result as the caller would read it off the wire: plain JSON, owned by the caller alone. */
export function wireResult<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
