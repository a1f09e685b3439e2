import type { FastifyInstance } from "fastify";
import { OPENAPI_PATH, openApiDocument } from "./openApiDocument.js";

/**
 * `GET /v1/openapi.json`: the API's OpenAPI 3.1 document, public like `/healthz` (it describes the
 * routes, never a workspace's data), so tooling can read it without a key. Built once, on first ask.
 */
export function openApiRoute(app: FastifyInstance): void {
  let document: string | undefined;
  app.get(OPENAPI_PATH, async (_request, reply) => {
    document ??= JSON.stringify(openApiDocument());
    return reply.type("application/json").send(document);
  });
}
