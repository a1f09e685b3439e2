import type { z } from "zod";

/** What a route takes as its body: a zod schema of a JSON body, or one of the multipart forms. */
export type BodySpec = z.ZodType | "multipart-file" | "multipart-skill" | "json";

/**
 * One route as the OpenAPI document describes it. `path` is Fastify's pattern (`:id`); the schemas
 * are the ones the route itself parses with, so the document cannot drift from the validation.
 */
export interface OperationSpec {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  summary: string;
  body?: BodySpec | undefined;
  /** The body may be left out (an archive's or erasure's optional JSON). */
  bodyOptional?: boolean | undefined;
  query?: z.ZodType | undefined;
  /** What a 200 carries: JSON (the default), a server-sent event stream, or raw bytes. */
  response?: "json" | "sse" | "binary" | undefined;
}
