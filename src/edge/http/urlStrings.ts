import type { FastifyInstance } from "fastify";
import type { AwakenError } from "../../kernel/errors.js";
import { hasNul, nulError, queryParamField, quotedName } from "./clientStrings.js";

/**
 * Path parameters and query names and values meet the NUL rule of every client string, on every
 * route, before the body is read or a handler runs (after `onRequest`, so the answer carries the
 * request id; authentication compares params but stores nothing). Node refuses a raw NUL in the
 * request line, so only `%00` decodes to one: a URL without it costs a single scan.
 */
export function refuseNulInUrl(app: FastifyInstance): void {
  // A callback hook: an async one costs a promise and a microtask hop on every request.
  app.addHook("preParsing", (request, _reply, payload, done) => {
    const problem = request.url.includes("%00") ? nulInUrlStrings(request.params, request.query) : null;
    if (problem) done(problem);
    else done(null, payload);
  });
}

/** The 400 naming the first path parameter or query parameter holding a NUL, or null. */
export function nulInUrlStrings(params: unknown, query: unknown): AwakenError | null {
  for (const [name, value] of entriesOf(params)) {
    if (typeof value === "string" && hasNul(value)) return nulError(`path parameter ${quotedName(name)}`);
  }
  for (const [name, value] of entriesOf(query)) {
    const values = Array.isArray(value) ? value : [value];
    if (hasNul(name) || values.some((v) => typeof v === "string" && hasNul(v))) {
      return nulError(queryParamField(name));
    }
  }
  return null;
}

function entriesOf(value: unknown): Array<[string, unknown]> {
  return typeof value === "object" && value !== null ? Object.entries(value) : [];
}
