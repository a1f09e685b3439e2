import { readFileSync } from "node:fs";
import { z } from "zod";
import { managedRouteRole } from "../managed-agents/routeRoles.js";
import { errorEnvelopeSchema } from "./errorEnvelope.js";
import { MANAGED_OPERATIONS } from "./managedOperations.js";
import type { BodySpec, OperationSpec } from "./operationSpec.js";
import { PROTOCOL_OPERATIONS } from "./protocolOperations.js";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[] };

/** Where the document is served (public: it holds no workspace data). */
export const OPENAPI_PATH = "/v1/openapi.json";

const { version } = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const ERROR_REF = { $ref: "#/components/schemas/ErrorEnvelope" };

/**
 * The zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), as a request must be written: the
 * input side of transforms and defaults. Named sub-schemas go to `components.schemas`.
 */
function jsonSchemaOf(schema: z.ZodType, components: Record<string, unknown>): JsonSchema {
  const {
    $schema: _dialect,
    $defs,
    ...rest
  } = z.toJSONSchema(schema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
  }) as JsonSchema & { $defs?: Record<string, unknown> };
  if (!$defs) return rest;
  Object.assign(components, $defs);
  return JSON.parse(JSON.stringify(rest).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
}

/** `/v1/agents/:id` → `/v1/agents/{id}`; a trailing wildcard is the parameter `path`. */
export function openApiPath(fastifyPath: string): string {
  return fastifyPath.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/{path}");
}

function pathParameters(path: string) {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => ({
    name: match[1]!,
    in: "path",
    required: true,
    schema: { type: "string" },
    ...(match[1] === "path" ? { description: "The rest of the path (any number of segments)." } : {}),
  }));
}

/** A query object's properties as parameters; a nested object is `name[key]=…` (deepObject). */
function queryParameters(schema: JsonSchema) {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: required.has(name),
    schema: property,
    ...(property.type === "object" ? { style: "deepObject", explode: true } : {}),
  }));
}

const MULTIPART: Record<"multipart-file" | "multipart-skill", JsonSchema> = {
  "multipart-file": {
    type: "object",
    required: ["file"],
    properties: {
      file: { type: "string", contentMediaType: "application/octet-stream" },
      expires_in_seconds: { type: "string", description: "Seconds until the file expires." },
    },
  },
  "multipart-skill": {
    type: "object",
    properties: {
      "files[]": {
        type: "array",
        items: { type: "string", contentMediaType: "application/octet-stream" },
        description: "The bundle's files, each part named with its path (SKILL.md among them), or one .zip.",
      },
      display_name: { type: "string" },
    },
  },
};

function requestBody(body: BodySpec, optional: boolean, components: Record<string, unknown>) {
  if (body === "multipart-file" || body === "multipart-skill") {
    return { required: true, content: { "multipart/form-data": { schema: MULTIPART[body] } } };
  }
  const schema = body === "json" ? { type: "object" } : jsonSchemaOf(body, components);
  return { required: !optional, content: { "application/json": { schema } } };
}

const RESPONSES = {
  json: { description: "OK", content: { "application/json": { schema: { type: "object" } } } },
  sse: {
    description: "A server-sent event stream",
    content: { "text/event-stream": { schema: { type: "string" } } },
  },
  binary: {
    description: "The bytes",
    content: {
      "application/octet-stream": {
        schema: { type: "string", contentMediaType: "application/octet-stream" },
      },
    },
  },
} as const;

function operation(spec: OperationSpec, managed: boolean, components: Record<string, unknown>) {
  const path = openApiPath(spec.path);
  const segments = spec.path.split("/").filter(Boolean);
  const tag = segments[1] === "awaken" ? "awaken" : (segments[1] ?? "v1");
  const parameters = [
    ...pathParameters(path),
    ...(spec.query ? queryParameters(jsonSchemaOf(spec.query, components)) : []),
  ];
  return {
    operationId: `${spec.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(\w?)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: spec.summary,
    tags: [tag],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body ? { requestBody: requestBody(spec.body, spec.bodyOptional === true, components) } : {}),
    responses: {
      "200": RESPONSES[spec.response ?? "json"],
      default: managed
        ? { description: "An error", content: { "application/json": { schema: ERROR_REF } } }
        : { description: "An error, in the protocol's own shape" },
    },
    ...(managed ? { "x-awaken-role": managedRouteRole(spec.path) } : {}),
  };
}

/** The OpenAPI 3.1 document of the server's `/v1/` API, built from the routes' own schemas. */
export function openApiDocument() {
  const components: Record<string, unknown> = {};
  const paths: Record<string, Record<string, unknown>> = {};
  const add = (spec: OperationSpec, managed: boolean) => {
    const path = openApiPath(spec.path);
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = operation(spec, managed, components);
  };
  for (const spec of MANAGED_OPERATIONS) add(spec, true);
  for (const spec of PROTOCOL_OPERATIONS) add(spec, false);
  paths[OPENAPI_PATH] = {
    get: {
      operationId: "getOpenApiDocument",
      summary: "This document",
      tags: ["awaken"],
      security: [],
      responses: { "200": RESPONSES.json },
    },
  };
  components.ErrorEnvelope = jsonSchemaOf(errorEnvelopeSchema, components);
  return {
    openapi: "3.1.0",
    info: {
      title: "Awaken Agents",
      version,
      description:
        "The Managed Agents wire (what @anthropic-ai/sdk's client.beta.agents | environments | sessions speak), Awaken's /v1/awaken/ extensions, and where the AI SDK, AG-UI, A2A and MCP edges are. Responses are described by the wire (docs/managed-agents-wire.md); requests by the schemas the server validates them with. x-awaken-role is the least API key role a route needs.",
    },
    servers: [{ url: "http://127.0.0.1:4600" }],
    security: [{ apiKey: [] }, { bearer: [] }],
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An API key, an access token, or (work routes) a self-hosted environment key.",
        },
      },
    },
  };
}
