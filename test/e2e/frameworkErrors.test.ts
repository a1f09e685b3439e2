import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SocketResponse, sendRawHttp } from "../support/rawSocket.js";
import { BAD_REQUEST, expectApiError, MODEL } from "../support/sdkHelpers.js";
import { startTestServer, TEST_API_KEY, type TestServer } from "../support/testServer.js";

// What fails before a route handler runs (Node's HTTP parser, Fastify's router and body parser)
// must still answer in the wire's envelope with a request-id, as the API's own errors do.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.close();
});

const AUTH = `authorization: Bearer ${TEST_API_KEY}\r\nanthropic-version: 2026-10-21\r\n`;

function request(lines: string): Promise<SocketResponse> {
  return sendRawHttp(t.server.url, lines);
}

/** Status, JSON envelope and a request-id header equal to the body's; returns the message. */
function expectEnvelope(response: SocketResponse, status: number, type: string): string {
  expect(response.status, response.body).toBe(status);
  expect(response.headers["content-type"]).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as {
    type: string;
    error: { type: string; message: string };
    request_id: string;
  };
  expect(body.type).toBe("error");
  expect(body.error.type).toBe(type);
  expect(body.request_id).toMatch(/^req_/);
  expect(response.headers["request-id"]).toBe(body.request_id);
  expect(body.error.message).not.toMatch(/FST_|HPE_|statusCode/);
  return body.error.message;
}

describe("errors raised below the routes answer in the error envelope", () => {
  it("headers too large are a 431 envelope, for raw HTTP and for the SDK", async () => {
    const big = "a".repeat(20_000);
    const raw = await request(`GET /v1/agents HTTP/1.1\r\nhost: x\r\n${AUTH}x-big: ${big}\r\n\r\n`);
    expect(expectEnvelope(raw, 431, "invalid_request_error")).toMatch(/headers are too large/);

    const error = await expectApiError(
      t.client.beta.agents.list({}, { headers: { "x-big": big } }),
      Anthropic.RequestHeaderFieldsTooLargeError,
      { status: 431, type: "invalid_request_error", message: [/headers are too large/] },
    );
    expect(error.requestID).toMatch(/^req_/);
  });

  it("bad percent-encoding in the path is a 400 envelope saying how to encode %", async () => {
    for (const path of ["/v1/agents/%E0%A4%A", "/v1/sessions/%zz/events"]) {
      const response = await request(`GET ${path} HTTP/1.1\r\nhost: x\r\n${AUTH}\r\n`);
      expect(expectEnvelope(response, 400, "invalid_request_error")).toMatch(/percent-encoding.*%25/);
    }
  });

  it("a content-length that is not a length, or is repeated, is a 400 envelope", async () => {
    const cases = [
      ["content-length: abc", /content-length header is not a valid length/],
      ["content-length: 2\r\ncontent-length: 3", /content-length header is repeated/],
    ] as const;
    for (const [header, message] of cases) {
      const response = await request(
        `POST /v1/agents HTTP/1.1\r\nhost: x\r\n${AUTH}content-type: application/json\r\n${header}\r\n\r\n{}`,
      );
      expect(expectEnvelope(response, 400, "invalid_request_error")).toMatch(message);
    }
  });

  it("bytes that are not HTTP are a 400 envelope", async () => {
    const response = await request("HELLO THERE\r\n\r\n");
    expect(expectEnvelope(response, 400, "invalid_request_error")).toMatch(/not valid HTTP/);
  });

  it("invalid JSON, a wrong content-type and an unknown route answer in the envelope", async () => {
    const post = (contentType: string, body: string) =>
      request(
        `POST /v1/agents HTTP/1.1\r\nhost: x\r\n${AUTH}content-type: ${contentType}\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    expect(expectEnvelope(await post("application/json", '{"name": '), 400, "invalid_request_error")).toMatch(
      /not valid JSON/,
    );
    for (const contentType of ["text/plain", "application/xml"]) {
      expect(expectEnvelope(await post(contentType, "hello"), 400, "invalid_request_error")).toMatch(
        /content-type: application\/json/,
      );
    }
    const unknown = await request(`GET /v1/nothing-here HTTP/1.1\r\nhost: x\r\n${AUTH}\r\n`);
    expect(expectEnvelope(unknown, 404, "not_found_error")).toMatch(/\/v1\/nothing-here/);
  });

  it("a wrong method on a known path is a 405 with an Allow header listing the path's methods", async () => {
    const cases = [
      ["DELETE", "/v1/agents", "GET, HEAD, POST"],
      ["PUT", "/v1/sessions/sesn_x/events", "GET, HEAD, POST"],
      ["GET", "/v1/agents/agent_x/archive", "POST"],
    ] as const;
    for (const [method, path, allow] of cases) {
      const response = await request(
        `${method} ${path} HTTP/1.1\r\nhost: x\r\n${AUTH}content-length: 0\r\n\r\n`,
      );
      expect(expectEnvelope(response, 405, "invalid_request_error")).toContain(`${method} is not allowed`);
      expect(response.headers.allow).toBe(allow);
    }
    const sdk = await t.client.request({ method: "delete", path: "/v1/agents" }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(sdk).toBeInstanceOf(Anthropic.APIError);
    expect((sdk as InstanceType<typeof Anthropic.APIError>).status).toBe(405);
    expect((sdk as InstanceType<typeof Anthropic.APIError>).headers?.get("allow")).toBe("GET, HEAD, POST");
  });

  it("an oversized body is a 413 of the wire's request_too_large type", async () => {
    const raw = await request(
      `POST /v1/agents HTTP/1.1\r\nhost: x\r\n${AUTH}content-type: application/json\r\ncontent-length: 40000000\r\n\r\n`,
    );
    expect(expectEnvelope(raw, 413, "request_too_large")).toMatch(/maximum allowed size/);

    await expectApiError(
      t.client.beta.agents.create({ name: "big", model: MODEL, system: "x".repeat(33 * 1024 * 1024) }),
      Anthropic.ContentTooLargeError,
      { status: 413, type: "request_too_large", message: [/maximum allowed size/] },
    );
  });

  it("__proto__ and constructor.prototype in a body are a 400 naming the field", async () => {
    const withProto = JSON.parse('{"__proto__": {"polluted": "yes"}}') as Record<string, string>;
    await expectApiError(
      t.client.beta.agents.create({ name: "p", model: MODEL, metadata: withProto }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["metadata.__proto__", /field name "__proto__" is not accepted/] },
    );
    const schema = {
      type: "object" as const,
      properties: { constructor: { prototype: { type: "string" } } },
    };
    await expectApiError(
      t.client.beta.agents.create({
        name: "p",
        model: MODEL,
        tools: [{ type: "custom", name: "t", description: "d", input_schema: schema }],
      }),
      Anthropic.BadRequestError,
      {
        ...BAD_REQUEST,
        message: ["tools[0].input_schema.properties.constructor.prototype", /"prototype" is not accepted/],
      },
    );
    // A field merely named "constructor" is fine.
    const fine = { type: "object" as const, properties: { constructor: { type: "string" } } };
    const agent = await t.client.beta.agents.create({
      name: "p",
      model: MODEL,
      tools: [{ type: "custom", name: "t", description: "d", input_schema: fine }],
    });
    expect(agent.tools[0]).toMatchObject({ input_schema: fine });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
