import type { FastifyInstance } from "fastify";
import { AwakenError } from "../../kernel/errors.js";
import { NUL_MESSAGE } from "./clientStrings.js";
import { formatPath } from "./fieldPath.js";
import { type JsonTextProblem, scanJsonText } from "./jsonTextScan.js";
import { refuseNulInUrl } from "./urlStrings.js";

/**
 * How deep a request body may nest objects and arrays, counted from the body itself. The API's own
 * structure uses under 10 levels; free-form fields (a tool's `input_schema`) get the rest, and each
 * such field has a tighter bound of its own in its schema.
 */
export const MAX_BODY_DEPTH = 64;

declare module "fastify" {
  interface FastifyContextConfig {
    /** A route whose bodies legitimately nest deeper than `MAX_BODY_DEPTH` (the worker transport). */
    maxBodyDepth?: number;
    /**
     * A peer's route whose bodies carry what models and tools produced (the worker transport): a
     * NUL there is data, stored as an escape, not a client's input to refuse.
     */
    bodyMayHoldNul?: boolean;
  }
}

/** Path segments shown in a message; a path 64 levels deep is cut so the message stays readable. */
const PATH_SEGMENTS_SHOWN = 12;

/**
 * The JSON body parser: refuses too-deep bodies, prototype keys and NUL characters before
 * `JSON.parse`, so nothing downstream walks an unbounded value or stores what one backend cannot,
 * and each refusal is a 400 naming where in the body it is. The URL's strings get the same NUL
 * rule in a hook installed here, so a client's input has one gate.
 * Body-less POSTs (archive) may still carry `content-type: application/json`: an empty body is
 * "no body", not a parse error. JSON is the only body the API takes: any other content-type
 * (Fastify also reads text/plain by default) is refused with a message that says to send JSON.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  refuseNulInUrl(app);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = typeof body === "string" ? body : body.toString("utf8");
    if (text.trim() === "") return done(null, undefined);
    const { maxBodyDepth = MAX_BODY_DEPTH, bodyMayHoldNul = false } = request.routeOptions.config;
    try {
      done(null, parseJsonBodyText(text, maxBodyDepth, { refuseNul: !bodyMayHoldNul }));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}

/**
 * A JSON body's text → its value, with the same refusals as every HTTP body (too deep, prototype
 * keys, NUL characters). The in-process client sends its bodies through this too, so both take the
 * same input.
 */
export function parseJsonBodyText(
  text: string,
  maxDepth: number = MAX_BODY_DEPTH,
  { refuseNul = true }: { refuseNul?: boolean } = {},
): unknown {
  const problem = scanJsonText(text, maxDepth, { refuseNul });
  if (problem) throw bodyProblemError(problem, maxDepth);
  return JSON.parse(text);
}

function bodyProblemError(problem: JsonTextProblem, maxDepth: number): AwakenError {
  const path = renderPath(problem.path);
  const message = problemMessage(problem, maxDepth);
  const where = path === "" ? "request body" : path;
  return new AwakenError("invalid_request", `${where}: ${message}`, {
    details: { issues: [{ path, message }] },
  });
}

function problemMessage(problem: JsonTextProblem, maxDepth: number): string {
  const key = JSON.stringify(problem.path[problem.path.length - 1]);
  switch (problem.kind) {
    case "too_deep":
      return `nests objects and arrays more than ${maxDepth} levels deep (counted from the request body); flatten it`;
    case "forbidden_key":
      return `the field name ${key} is not accepted here (it names an object's prototype); rename the field`;
    case "nul_character":
      return problem.inKey ? `the field name ${NUL_MESSAGE}` : NUL_MESSAGE;
  }
}

function renderPath(path: ReadonlyArray<string | number>): string {
  if (path.length <= PATH_SEGMENTS_SHOWN) return formatPath(path);
  return `${formatPath(path.slice(0, PATH_SEGMENTS_SHOWN))}…`;
}
