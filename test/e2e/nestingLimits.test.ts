import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BAD_REQUEST,
  createSession,
  expectApiError,
  expectRawError,
  MODEL,
  rawRequest,
  runTurn,
  StreamReader,
} from "../support/sdkHelpers.js";
import { startTestServer, type TestServer } from "../support/testServer.js";

// A free-form JSON field (a custom tool's input_schema) nested thousands of levels deep once
// overflowed the stack in agent resolution and answered 500. Every route that takes one must
// refuse it with a 400 naming the field, however deep, and keep accepting ordinary schemas.

let t: TestServer;
let agentId: string;
let environmentId: string;
let sessionId: string;
beforeAll(async () => {
  t = await startTestServer();
  const { agent, environment, session } = await createSession(t.client);
  agentId = agent.id;
  environmentId = environment.id;
  sessionId = session.id;
});
afterAll(async () => {
  await t.close();
});

/** A JSON Schema with `levels` nested objects (2 containers each), as text: no recursion to build it. */
function nestedSchemaJson(levels: number): string {
  const open = '{"type":"object","properties":{"a":';
  return `${open.repeat(levels - 1)}{"type":"object"}${"}}".repeat(levels - 1)}`;
}

function toolsJson(levels: number): string {
  return `[{"type":"custom","name":"deep","description":"d","input_schema":${nestedSchemaJson(levels)}}]`;
}

/** Every route that takes tools, with the path (in the message) of the deep schema. */
const ROUTES = [
  {
    name: "POST /v1/agents",
    send: (tools: string) =>
      rawRequest(t, "POST", "/v1/agents", {
        body: `{"name":"deep","model":"${MODEL}","tools":${tools}}`,
      }),
    field: "tools[0].input_schema",
  },
  {
    name: "POST /v1/agents/{id}",
    send: (tools: string) =>
      rawRequest(t, "POST", `/v1/agents/${agentId}`, {
        body: `{"version":1,"tools":${tools}}`,
      }),
    field: "tools[0].input_schema",
  },
  {
    name: "POST /v1/sessions (agent_with_overrides)",
    send: (tools: string) =>
      rawRequest(t, "POST", "/v1/sessions", {
        body: `{"environment_id":"${environmentId}","agent":{"type":"agent_with_overrides","id":"${agentId}","tools":${tools}}}`,
      }),
    field: "agent.tools[0].input_schema",
  },
  {
    name: "POST /v1/sessions/{id}",
    send: (tools: string) =>
      rawRequest(t, "POST", `/v1/sessions/${sessionId}`, {
        body: `{"agent":{"tools":${tools}}}`,
      }),
    field: "agent.tools[0].input_schema",
  },
];

describe("free-form JSON nesting is bounded at the edge", () => {
  for (const route of ROUTES) {
    it(`${route.name}: a schema 1 000 or 100 000 levels deep is a 400 naming the field`, async () => {
      for (const containers of [1_000, 100_000]) {
        const response = await route.send(toolsJson(containers / 2));
        const message = expectRawError(response, 400, "invalid_request_error");
        expect(message).toContain(route.field);
        expect(message).toMatch(/more than 64 levels deep/);
      }
    });

    it(`${route.name}: a schema deeper than the field's own bound (32) is a 400 naming exactly the field`, async () => {
      const response = await route.send(toolsJson(20)); // 39 containers: within the body's 64
      const message = expectRawError(response, 400, "invalid_request_error");
      expect(message).toMatch(
        new RegExp(`^${route.field.replace(/[.[\]]/g, "\\$&")}: nests more than 32 levels`),
      );
    });
  }

  it("the SDK gets a BadRequestError for a 1 000-deep schema on create and on sessions.create", async () => {
    const deep = JSON.parse(nestedSchemaJson(500)) as { type: "object" };
    await expectApiError(
      t.client.beta.agents.create({
        name: "deep",
        model: MODEL,
        tools: [{ type: "custom", name: "deep", description: "d", input_schema: deep }],
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["tools[0].input_schema", /more than 64 levels deep/] },
    );
    await expectApiError(
      t.client.beta.sessions.create({
        environment_id: environmentId,
        agent: {
          type: "agent_with_overrides",
          id: agentId,
          tools: [{ type: "custom", name: "deep", description: "d", input_schema: deep }],
        },
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["agent.tools[0].input_schema", /more than 64 levels deep/] },
    );
  });

  it("an input_schema over the free-form size bound is a 400 naming the field and its size", async () => {
    const big = { type: "object" as const, description: "x".repeat(70_000) };
    await expectApiError(
      t.client.beta.agents.create({
        name: "big",
        model: MODEL,
        tools: [{ type: "custom", name: "big", description: "d", input_schema: big }],
      }),
      Anthropic.BadRequestError,
      { ...BAD_REQUEST, message: ["tools[0].input_schema", /bytes as JSON; at most 65536/] },
    );
  });

  it("a schema of ordinary depth still works on every route, and a session runs with it", async () => {
    const schema = JSON.parse(nestedSchemaJson(16)) as { type: "object" }; // 31 containers
    const tool = { type: "custom" as const, name: "nested", description: "d", input_schema: schema };
    const agent = await t.client.beta.agents.create({ name: "nested", model: MODEL, tools: [tool] });
    expect(agent.tools[0]).toMatchObject({ input_schema: schema });
    const updated = await t.client.beta.agents.update(agent.id, { version: agent.version, tools: [tool] });
    expect(updated.tools[0]).toMatchObject({ input_schema: schema });
    const session = await t.client.beta.sessions.create({
      environment_id: environmentId,
      agent: { type: "agent_with_overrides", id: agent.id, tools: [tool] },
    });
    expect(session.agent.tools[0]).toMatchObject({ input_schema: schema });
    const reader = await StreamReader.open(t.client, session.id);
    const turn = await runTurn(t.client, reader, session.id, "hello");
    await reader.close();
    expect(turn.at(-1)?.type).toBe("session.status_idle");
  });
});
