/**
 * The OpenAPI document is valid OpenAPI 3.1, names every `/v1/` route the server registers (a new
 * route without documentation fails here) and no route it does not, is served without a key, and
 * is what docs/openapi.json holds.
 */
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { errorEnvelopeSchema } from "../../../src/edge/openapi/errorEnvelope.js";
import { OPENAPI_PATH, openApiDocument, openApiPath } from "../../../src/edge/openapi/openApiDocument.js";
import { registeredRoutes, stubbedServer } from "./registeredRoutes.js";

/** Not part of the public API: the remote workers' transport (worker token only, between servers). */
const INTERNAL_PREFIXES = ["/v1/awaken/worker/"];

const document = openApiDocument();
const documented = new Set(
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  ),
);

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 and its references resolve", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
  });

  it("documents every /v1/ route the server registers, and only those", async () => {
    const candidates = [...documented].map((route) => {
      const [method, path] = route.split(" ") as [string, string];
      return { method, url: path.replace(/\{path\}$/, "*").replace(/\{(\w+)\}/g, ":$1") };
    });
    const served = (await registeredRoutes(candidates))
      .filter(({ method, url }) => method !== "HEAD" && url.startsWith("/v1/"))
      .filter(({ url }) => !INTERNAL_PREFIXES.some((prefix) => url.startsWith(prefix)))
      .map(({ method, url }) => `${method} ${openApiPath(url)}`);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
    expect([...documented].filter((route) => !served.includes(route))).toEqual([]);
  });

  it("gives every Managed Agents operation the error envelope, and JSON bodies their schemas", () => {
    const create = document.paths["/v1/agents"]?.post as {
      requestBody: { content: { "application/json": { schema: { properties: Record<string, unknown> } } } };
      responses: { default: unknown };
    };
    expect(Object.keys(create.requestBody.content["application/json"].schema.properties)).toContain("model");
    expect(JSON.stringify(create.responses.default)).toContain("#/components/schemas/ErrorEnvelope");
    const events = document.paths["/v1/sessions/{id}/events"]?.get as { parameters: { name: string }[] };
    expect(events.parameters.map((parameter) => parameter.name)).toContain("id");
  });

  it("is served at /v1/openapi.json without a key, and a failure there is the documented envelope", async () => {
    const app = stubbedServer();
    try {
      const served = await app.inject({ method: "GET", url: OPENAPI_PATH });
      expect(served.statusCode).toBe(200);
      expect(served.json()).toEqual(JSON.parse(JSON.stringify(document)));
      const refused = await app.inject({ method: "GET", url: "/v1/agents" });
      expect(refused.statusCode).toBe(401);
      expect(errorEnvelopeSchema.safeParse(refused.json()).success).toBe(true);
    } finally {
      await app.close().catch(() => undefined);
    }
  });

  it("is what docs/openapi.json holds (npm run openapi writes it)", () => {
    const committed = JSON.parse(
      readFileSync(new URL("../../../docs/openapi.json", import.meta.url), "utf8"),
    );
    expect(committed).toEqual(JSON.parse(JSON.stringify(document)));
  });
});
