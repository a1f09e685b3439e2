import type { AgentCreateParams, AgentUpdateParams } from "@anthropic-ai/sdk/resources/beta/agents/agents";
import type {
  EnvironmentCreateParams,
  EnvironmentUpdateParams,
} from "@anthropic-ai/sdk/resources/beta/environments/environments";
import type {
  BetaManagedAgentsSessionEventType,
  EventSendParams,
} from "@anthropic-ai/sdk/resources/beta/sessions/events";
import type {
  SessionCreateParams,
  SessionUpdateParams,
} from "@anthropic-ai/sdk/resources/beta/sessions/sessions";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { AgentCreateInput, AgentUpdateInput } from "../../src/control/agentDefinition.js";
import type { EnvironmentConfigInput } from "../../src/coordinator/environmentConfig.js";
import {
  type CreateAgentBody,
  createAgentBodySchema,
  listAgentsQuerySchema,
  retrieveAgentQuerySchema,
  type UpdateAgentBody,
  updateAgentBodySchema,
} from "../../src/edge/managed-agents/schemas/agents.js";
import { normalizeQuery, parseBody, parseQuery } from "../../src/edge/managed-agents/schemas/common.js";
import {
  type CreateEnvironmentBody,
  createEnvironmentBodySchema,
  listEnvironmentsQuerySchema,
  updateEnvironmentBodySchema,
} from "../../src/edge/managed-agents/schemas/environments.js";
import {
  listEventsQuerySchema,
  type SessionEventType,
  sendEventsBodySchema,
  streamEventsQuerySchema,
} from "../../src/edge/managed-agents/schemas/events.js";
import {
  createSessionBodySchema,
  listSessionsQuerySchema,
  updateSessionBodySchema,
} from "../../src/edge/managed-agents/schemas/sessions.js";
import { AwakenError } from "../../src/kernel/errors.js";

/** Runs `fn`, expects an AwakenError, and returns it. */
function failure(fn: () => unknown): AwakenError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AwakenError);
    return err as AwakenError;
  }
  throw new Error("expected an AwakenError");
}

function bodyMessage(schema: Parameters<typeof parseBody>[0], body: unknown): string {
  const err = failure(() => parseBody(schema, body));
  expect(err.code).toBe("invalid_request");
  return err.message;
}

const agent = { name: "Agent", model: "claude-opus-5-5" };
const text = (t: string) => ({ type: "text", text: t });
const userMessage = (t = "hi") => ({ type: "user.message", content: [text(t)] });
const systemMessage = { type: "system.message", content: [text("be brief")] };

// -------------------------------------------------------------------------------------------------
describe("parseBody", () => {
  it("a body that is not a JSON object is rejected", () => {
    for (const body of [undefined, null, "str", 3, [agent]]) {
      expect(bodyMessage(createAgentBodySchema, body)).toBe("Request body must be a JSON object");
    }
  });

  it("the message names the field path and the problem", () => {
    expect(bodyMessage(createAgentBodySchema, { ...agent, name: "x".repeat(257) })).toBe(
      "name: expected a string of 1-256 characters (got 257)",
    );
    expect(bodyMessage(createAgentBodySchema, { ...agent, name: 5 })).toBe(
      "name: expected a string of 1-256 characters, got 5",
    );
  });

  it("a missing required field says it is required", () => {
    expect(bodyMessage(createAgentBodySchema, { model: "m" })).toBe(
      "name: is required; expected a string of 1-256 characters",
    );
  });

  it("an unknown top-level field is rejected by name", () => {
    expect(bodyMessage(createAgentBodySchema, { ...agent, colour: "red" })).toBe(
      "colour: unknown field; remove it",
    );
  });

  it("betas or workspace_id in a body point at the header the SDK uses", () => {
    expect(bodyMessage(createAgentBodySchema, { ...agent, betas: ["x"] })).toBe(
      "betas: unknown field; send it as the anthropic-beta header instead",
    );
    expect(bodyMessage(createAgentBodySchema, { ...agent, workspace_id: "w" })).toMatch(
      /anthropic-workspace-id header/,
    );
  });

  it("several problems: the first is in the message, all are in details", () => {
    const err = failure(() => parseBody(createAgentBodySchema, { name: "", model: 1 }));
    expect(err.message).toMatch(/^name: .* \(and 1 more problem\)$/);
    expect(err.details).toEqual({
      issues: [
        { path: "name", message: expect.any(String) },
        { path: "model", message: expect.stringMatching(/model id string or an object/) },
      ],
    });
    expect(err.category).toBe("invalid");
  });

  it("returns the parsed value with defaults applied", () => {
    expect(parseBody(createAgentBodySchema, agent)).toEqual(agent);
  });
});

describe("metadata schemas", () => {
  const metadataFailure = (schema: Parameters<typeof parseBody>[0], body: unknown) => {
    const err = failure(() => parseBody(schema, body));
    expect(err.code).toBe("invalid_metadata");
    return err.message;
  };

  it("more than 16 keys fails with invalid_metadata", () => {
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    expect(metadataFailure(createAgentBodySchema, { ...agent, metadata })).toBe(
      "metadata: at most 16 keys are allowed (got 17); remove some keys",
    );
  });

  it("a key over 64 characters or a value over 512 fails with invalid_metadata", () => {
    const key = "k".repeat(65);
    expect(metadataFailure(createAgentBodySchema, { ...agent, metadata: { [key]: "v" } })).toBe(
      `metadata.${key}: keys must be 1-64 characters (got 65)`,
    );
    expect(
      metadataFailure(createAgentBodySchema, { ...agent, metadata: { "my key": "v".repeat(513) } }),
    ).toBe('metadata["my key"]: values must be at most 512 characters (got 513)');
  });

  it("non-string values fail with invalid_metadata; null is only a patch value", () => {
    expect(metadataFailure(createAgentBodySchema, { ...agent, metadata: { a: 1 } })).toBe(
      "metadata.a: expected a string, got 1",
    );
    expect(metadataFailure(createAgentBodySchema, { ...agent, metadata: { a: null } })).toMatch(
      /expected a string/,
    );
    expect(metadataFailure(createAgentBodySchema, { ...agent, metadata: [] })).toMatch(/expected an object/);
    expect(parseBody(updateAgentBodySchema, { metadata: { a: null, b: "x" } })).toEqual({
      metadata: { a: null, b: "x" },
    });
  });

  it("exactly 16 keys of 64 characters with 512-character values are accepted", () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, "k"), "v".repeat(512)]),
    );
    expect(parseBody(createAgentBodySchema, { ...agent, metadata }).metadata).toEqual(metadata);
  });

  it('environment metadata patches accept "" (meaning delete)', () => {
    expect(parseBody(updateEnvironmentBodySchema, { metadata: { a: "", b: null } })).toEqual({
      metadata: { a: "", b: null },
    });
  });
});

// -------------------------------------------------------------------------------------------------
describe("normalizeQuery", () => {
  it("folds key[] into an array, even for a single value", () => {
    expect(normalizeQuery({ "types[]": "user.message" })).toEqual({ types: ["user.message"] });
    expect(normalizeQuery({ "statuses[]": ["idle", "running"] })).toEqual({ statuses: ["idle", "running"] });
  });

  it("folds a repeated plain key into an array and merges it with key[]", () => {
    expect(normalizeQuery({ statuses: ["idle", "running"] })).toEqual({ statuses: ["idle", "running"] });
    expect(normalizeQuery({ "statuses[]": "idle", statuses: "running" })).toEqual({
      statuses: ["idle", "running"],
    });
  });

  it("nests created_at[gte] under created_at", () => {
    expect(
      normalizeQuery({ "created_at[gte]": "2026-01-01T00:00:00Z", "created_at[lt]": "2026-02-01T00:00:00Z" }),
    ).toEqual({ created_at: { gte: "2026-01-01T00:00:00Z", lt: "2026-02-01T00:00:00Z" } });
  });

  it("drops empty values, which is how the SDK serialises page: null", () => {
    expect(normalizeQuery({ page: "", limit: "5", x: undefined })).toEqual({ limit: "5" });
  });
});

describe("parseQuery", () => {
  const queryMessage = (schema: Parameters<typeof parseQuery>[0], raw: Record<string, string | string[]>) => {
    const err = failure(() => parseQuery(schema, raw));
    expect(err.code).toBe("invalid_request");
    return err.message;
  };

  it("limit defaults to 20 and include_archived to false", () => {
    expect(parseQuery(listEnvironmentsQuerySchema, {})).toEqual({ limit: 20, include_archived: false });
    expect(parseQuery(listEnvironmentsQuerySchema, undefined)).toEqual({
      limit: 20,
      include_archived: false,
    });
  });

  it("limit must be an integer in 1..1000", () => {
    expect(parseQuery(listEnvironmentsQuerySchema, { limit: "1000" }).limit).toBe(1000);
    expect(queryMessage(listEnvironmentsQuerySchema, { limit: "0" })).toBe(
      'limit: expected an integer between 1 and 1000, got "0"',
    );
    expect(queryMessage(listEnvironmentsQuerySchema, { limit: "1001" })).toMatch(/^limit: /);
    expect(queryMessage(listEnvironmentsQuerySchema, { limit: "2.5" })).toMatch(/^limit: /);
  });

  it('booleans are "true" or "false" only', () => {
    expect(parseQuery(listEnvironmentsQuerySchema, { include_archived: "true" }).include_archived).toBe(true);
    expect(queryMessage(listEnvironmentsQuerySchema, { include_archived: "yes" })).toBe(
      'include_archived: expected "true" or "false"',
    );
  });

  it("an unknown query parameter is rejected by name", () => {
    expect(queryMessage(listEnvironmentsQuerySchema, { colour: "red" })).toBe(
      "colour: unknown query parameter",
    );
    expect(queryMessage(listAgentsQuerySchema, { "created_at[gt]": "2026-01-01T00:00:00Z" })).toBe(
      "created_at[gt]: unknown query parameter",
    );
  });

  it("created_at filters must be RFC 3339 timestamps, named in wire form", () => {
    const q = parseQuery(listAgentsQuerySchema, { "created_at[gte]": "2026-01-01T00:00:00.123+02:00" });
    expect(q.created_at).toEqual({ gte: "2026-01-01T00:00:00.123+02:00" });
    expect(queryMessage(listAgentsQuerySchema, { "created_at[lte]": "yesterday" })).toBe(
      "created_at[lte]: expected an RFC 3339 timestamp such as 2026-01-01T00:00:00Z",
    );
  });

  it("page is an opaque string", () => {
    expect(parseQuery(listAgentsQuerySchema, { page: "abc", limit: "5" })).toMatchObject({
      page: "abc",
      limit: 5,
    });
  });
});

// -------------------------------------------------------------------------------------------------
describe("agents", () => {
  it("create accepts the model as a string or an object with a bare effort", () => {
    const body = parseBody(createAgentBodySchema, {
      ...agent,
      model: { id: "claude-opus-5-5", effort: "high", speed: "fast" },
    });
    expect(body.model).toEqual({ id: "claude-opus-5-5", effort: "high", speed: "fast" });
  });

  it("model is required and must not be empty", () => {
    expect(bodyMessage(createAgentBodySchema, { name: "A" })).toMatch(/^model: /);
    expect(bodyMessage(createAgentBodySchema, { name: "A", model: { id: "m", effort: "huge" } })).toBe(
      'model.effort: expected one of "low", "medium", "high", "xhigh", "max", bare or as {"type": …}',
    );
  });

  it("description is capped at 2048 characters and system at 100000", () => {
    expect(parseBody(createAgentBodySchema, { ...agent, description: "d".repeat(2048) })).toBeTruthy();
    expect(bodyMessage(createAgentBodySchema, { ...agent, description: "d".repeat(2049) })).toBe(
      "description: expected a string of at most 2048 characters (got 2049)",
    );
    expect(parseBody(createAgentBodySchema, { ...agent, system: "s".repeat(100_000) })).toBeTruthy();
    expect(bodyMessage(createAgentBodySchema, { ...agent, system: "s".repeat(100_001) })).toMatch(
      /^system: expected a string of at most 100000 characters/,
    );
  });

  it("at most 256 tools and 20 mcp servers", () => {
    const custom = (i: number) => ({
      type: "custom",
      name: `t${i}`,
      description: "",
      input_schema: { type: "object" },
    });
    const tools = Array.from({ length: 257 }, (_, i) => custom(i));
    expect(bodyMessage(createAgentBodySchema, { ...agent, tools })).toBe(
      "tools: must contain at most 256 items (got 257)",
    );
    const servers = Array.from({ length: 21 }, (_, i) => ({
      name: `s${i}`,
      type: "url",
      url: "https://x.example",
    }));
    expect(bodyMessage(createAgentBodySchema, { ...agent, mcp_servers: servers })).toBe(
      "mcp_servers: must contain at most 20 items (got 21)",
    );
  });

  it("custom tool names are 1-128 letters, digits, underscores or hyphens", () => {
    const tool = (name: string) => ({
      type: "custom",
      name,
      description: "d",
      input_schema: { type: "object" },
    });
    expect(parseBody(createAgentBodySchema, { ...agent, tools: [tool("get-weather_2")] })).toBeTruthy();
    expect(bodyMessage(createAgentBodySchema, { ...agent, tools: [tool("get weather")] })).toBe(
      "tools[0].name: expected 1-128 characters of letters, digits, underscores or hyphens",
    );
    expect(bodyMessage(createAgentBodySchema, { ...agent, tools: [tool("x".repeat(129))] })).toMatch(
      /^tools\[0\]\.name/,
    );
  });

  it('a custom tool input_schema must have "type": "object" and may carry other keywords', () => {
    const tool = (input_schema: unknown) => ({ type: "custom", name: "t", description: "d", input_schema });
    const ok = parseBody(createAgentBodySchema, {
      ...agent,
      tools: [
        tool({
          type: "object",
          properties: { q: { type: "string" } },
          required: ["q"],
          additionalProperties: false,
        }),
      ],
    });
    expect(ok.tools?.[0]).toMatchObject({ input_schema: { additionalProperties: false } });
    expect(bodyMessage(createAgentBodySchema, { ...agent, tools: [tool({ type: "string" })] })).toBe(
      'tools[0].input_schema.type: input_schema must be a JSON Schema with "type": "object"',
    );
  });

  it("an input_schema too deep or too large for a free-form field is refused naming the field", () => {
    const tool = (input_schema: unknown) => ({ type: "custom", name: "t", description: "d", input_schema });
    // Built without recursion, 100 000 containers deep: the check itself must not overflow the stack.
    let deep: Record<string, unknown> = { type: "object" };
    for (let i = 0; i < 50_000; i += 1) deep = { type: "object", properties: { a: deep } };
    const tooDeep = { ...agent, tools: [tool(deep)] };
    for (const schema of [createAgentBodySchema, updateAgentBodySchema]) {
      expect(bodyMessage(schema, tooDeep)).toBe(
        "tools[0].input_schema: nests more than 32 levels deep; flatten it",
      );
    }
    expect(
      bodyMessage(createSessionBodySchema, {
        environment_id: "env_1",
        agent: { type: "agent_with_overrides", id: "agent_1", tools: [tool(deep)] },
      }),
    ).toBe("agent.tools[0].input_schema: nests more than 32 levels deep; flatten it");
    const big = tool({ type: "object", description: "é".repeat(40_000) });
    expect(bodyMessage(createAgentBodySchema, { ...agent, tools: [big] })).toMatch(
      /^tools\[0\]\.input_schema: is 80\d{3} bytes as JSON; at most 65536 are accepted$/,
    );
    let legal: Record<string, unknown> = { type: "object" };
    for (let i = 0; i < 15; i += 1) legal = { type: "object", properties: { a: legal } }; // 31 deep
    expect(parseBody(createAgentBodySchema, { ...agent, tools: [tool(legal)] }).tools?.[0]).toMatchObject({
      input_schema: legal,
    });
  });

  it("an unknown tool type is named with the accepted types", () => {
    expect(bodyMessage(createAgentBodySchema, { ...agent, tools: [{ type: "browser" }] })).toBe(
      'tools[0].type: unknown tool type "browser"; expected one of "agent_toolset_20260401", "mcp_toolset", "custom"',
    );
  });

  it("an unknown built-in tool name is named", () => {
    expect(
      bodyMessage(createAgentBodySchema, {
        ...agent,
        tools: [{ type: "agent_toolset_20260401", configs: [{ name: "rm" }] }],
      }),
    ).toMatch(/^tools\[0\]\.configs\[0\]\.name: unknown built-in tool name "rm"; expected one of "bash"/);
  });

  it("web_fetch may not combine allowed_domains and blocked_domains", () => {
    const configs = [{ name: "web_fetch", allowed_domains: ["a.example"], blocked_domains: ["b.example"] }];
    expect(
      bodyMessage(createAgentBodySchema, { ...agent, tools: [{ type: "agent_toolset_20260401", configs }] }),
    ).toBe(
      "tools[0].configs[0].blocked_domains: allowed_domains and blocked_domains cannot be combined; use one of them",
    );
  });

  it("web_fetch url_sources accepts shorthands but not all-none", () => {
    const withSources = (url_sources: unknown) => ({
      ...agent,
      tools: [{ type: "agent_toolset_20260401", configs: [{ name: "web_fetch", url_sources }] }],
    });
    expect(
      parseBody(createAgentBodySchema, withSources({ user_input: "none", client_tool_results: "all" })),
    ).toBeTruthy();
    expect(
      bodyMessage(
        createAgentBodySchema,
        withSources({
          user_input: "none",
          client_tool_results: "none",
          server_tool_results: { type: "none" },
        }),
      ),
    ).toMatch(/every source to "none"/);
  });

  it("a toolset config type must match its name", () => {
    expect(
      bodyMessage(createAgentBodySchema, {
        ...agent,
        tools: [{ type: "agent_toolset_20260401", configs: [{ name: "bash", type: "read" }] }],
      }),
    ).toBe("tools[0].configs[0].type: must equal name");
  });

  it("update accepts an empty body; name and model cannot be cleared", () => {
    expect(parseBody(updateAgentBodySchema, {})).toEqual({});
    expect(bodyMessage(updateAgentBodySchema, { name: null })).toMatch(
      /^name: expected a string of 1-256 characters/,
    );
    expect(bodyMessage(updateAgentBodySchema, { model: null })).toMatch(/^model: /);
  });

  it("update accepts null for the clearable fields", () => {
    const body = {
      description: null,
      system: null,
      tools: null,
      mcp_servers: null,
      skills: null,
      multiagent: null,
    };
    expect(parseBody(updateAgentBodySchema, body)).toEqual(body);
  });

  it("update version must be an integer ≥ 1", () => {
    expect(parseBody(updateAgentBodySchema, { version: 3 })).toEqual({ version: 3 });
    expect(bodyMessage(updateAgentBodySchema, { version: 0 })).toBe("version: must be at least 1");
    expect(bodyMessage(updateAgentBodySchema, { version: 1.5 })).toBe(
      "version: expected an integer, got 1.5",
    );
  });

  it("retrieve version is an integer ≥ 1 from the query string", () => {
    expect(parseQuery(retrieveAgentQuerySchema, { version: "2" })).toEqual({ version: 2 });
    expect(parseQuery(retrieveAgentQuerySchema, {})).toEqual({});
    expect(failure(() => parseQuery(retrieveAgentQuerySchema, { version: "0" })).message).toBe(
      'version: expected an integer ≥ 1, got "0"',
    );
  });

  it("multiagent and execution_identity shapes are checked", () => {
    expect(
      parseBody(createAgentBodySchema, {
        ...agent,
        multiagent: {
          type: "coordinator",
          agents: ["agent_1", { type: "self" }, { type: "agent", id: "a", version: 2 }],
        },
        execution_identity: { type: "aws_role", role_arn: "arn:aws:iam::1:role/r" },
      }),
    ).toBeTruthy();
    expect(bodyMessage(createAgentBodySchema, { ...agent, multiagent: { type: "swarm" } })).toMatch(
      /^multiagent\.type: unknown multiagent type "swarm"/,
    );
  });

  it("parsed agent bodies are assignable to the domain inputs", () => {
    expectTypeOf<CreateAgentBody>().toExtend<AgentCreateInput>();
    expectTypeOf<UpdateAgentBody>().toExtend<AgentUpdateInput>();
  });

  it("what the SDK can send type-checks against the parsed body shape", () => {
    type Body<T> = Omit<T, "betas" | "workspace_id">;
    expectTypeOf<Body<AgentCreateParams>>().toExtend<z_input<typeof createAgentBodySchema>>();
    expectTypeOf<Body<AgentUpdateParams>>().toExtend<z_input<typeof updateAgentBodySchema>>();
  });
});

type z_input<T extends { _zod: { input: unknown } }> = T["_zod"]["input"];

// -------------------------------------------------------------------------------------------------
describe("environments", () => {
  it("create needs only a name; scope is organization or account", () => {
    expect(parseBody(createEnvironmentBodySchema, { name: "env" })).toEqual({ name: "env" });
    expect(parseBody(createEnvironmentBodySchema, { name: "env", scope: "account" })).toBeTruthy();
    expect(bodyMessage(createEnvironmentBodySchema, { name: "env", scope: "team" })).toBe(
      'scope: expected one of "organization", "account"; got "team"',
    );
  });

  it("an unknown config type is named", () => {
    expect(bodyMessage(createEnvironmentBodySchema, { name: "env", config: { type: "k8s" } })).toBe(
      'config.type: unknown config type "k8s"; expected one of "cloud", "self_hosted"',
    );
  });

  it("limited networking fields are optional and nullable", () => {
    const body = parseBody(createEnvironmentBodySchema, {
      name: "env",
      config: {
        type: "cloud",
        networking: { type: "limited", allowed_hosts: null },
        packages: { pip: ["x"] },
      },
    });
    expect(body.config).toEqual({
      type: "cloud",
      networking: { type: "limited", allowed_hosts: null },
      packages: { pip: ["x"] },
    });
  });

  it("update accepts null name/config meaning keep", () => {
    expect(parseBody(updateEnvironmentBodySchema, { name: null, config: null, description: "" })).toEqual({
      name: null,
      config: null,
      description: "",
    });
  });

  it("parsed environment config is assignable to the domain input", () => {
    expectTypeOf<NonNullable<CreateEnvironmentBody["config"]>>().toExtend<EnvironmentConfigInput>();
    expectTypeOf<Omit<EnvironmentCreateParams, "betas" | "workspace_id">>().toExtend<
      z_input<typeof createEnvironmentBodySchema>
    >();
    expectTypeOf<Omit<EnvironmentUpdateParams, "betas" | "workspace_id">>().toExtend<
      z_input<typeof updateEnvironmentBodySchema>
    >();
  });
});

// -------------------------------------------------------------------------------------------------
describe("sessions", () => {
  const session = { agent: "agent_1", environment_id: "env_1" };

  it("agent may be an id, a versioned reference or an override object", () => {
    expect(parseBody(createSessionBodySchema, session)).toEqual(session);
    expect(
      parseBody(createSessionBodySchema, { ...session, agent: { type: "agent", id: "agent_1", version: 2 } }),
    ).toBeTruthy();
    expect(
      parseBody(createSessionBodySchema, {
        ...session,
        agent: { type: "agent_with_overrides", id: "agent_1", model: "m", system: null, tools: [] },
      }),
    ).toBeTruthy();
  });

  it("a bad agent reference names the problem", () => {
    expect(bodyMessage(createSessionBodySchema, { ...session, agent: { type: "team", id: "x" } })).toBe(
      'agent.type: unknown agent type "team"; expected one of "agent", "agent_with_overrides"',
    );
    expect(
      bodyMessage(createSessionBodySchema, { ...session, agent: { type: "agent", id: "a", version: 0 } }),
    ).toBe("agent.version: must be at least 1");
    expect(bodyMessage(createSessionBodySchema, { ...session, agent: 5 })).toMatch(
      /^agent: expected an agent id string/,
    );
  });

  it("environment_id is required", () => {
    expect(bodyMessage(createSessionBodySchema, { agent: "a" })).toBe("environment_id: is required");
  });

  it("initial_events take at most 50 user.message / user.define_outcome events", () => {
    const events = Array.from({ length: 50 }, () => userMessage());
    expect(parseBody(createSessionBodySchema, { ...session, initial_events: events })).toBeTruthy();
    expect(
      bodyMessage(createSessionBodySchema, { ...session, initial_events: [...events, userMessage()] }),
    ).toBe("initial_events: must contain at most 50 items (got 51)");
    expect(
      bodyMessage(createSessionBodySchema, { ...session, initial_events: [{ type: "user.interrupt" }] }),
    ).toBe(
      'initial_events[0].type: unknown initial event type "user.interrupt"; expected one of "user.message", "user.define_outcome"',
    );
  });

  it("resources take the three mount shapes", () => {
    const resources = [
      {
        type: "github_repository",
        url: "https://github.com/o/r",
        checkout: { type: "branch", name: "main" },
      },
      { type: "file", file_id: "file_1" },
      { type: "memory_store", memory_store_id: "memstore_1", access: "read_only" },
    ];
    expect(parseBody(createSessionBodySchema, { ...session, resources }).resources).toEqual(resources);
    expect(bodyMessage(createSessionBodySchema, { ...session, resources: [{ type: "s3" }] })).toMatch(
      /^resources\[0\]\.type: unknown resource type "s3"/,
    );
  });

  it("title is at most 512 characters or null", () => {
    expect(parseBody(createSessionBodySchema, { ...session, title: null })).toBeTruthy();
    expect(bodyMessage(createSessionBodySchema, { ...session, title: "t".repeat(513) })).toBe(
      "title: expected a string of at most 512 characters (got 513)",
    );
  });

  it("budget amounts are minor units without leading zeros, in USD", () => {
    const budget = (amount: string, currency = "USD") => ({
      type: "limit",
      max_list_cost: { amount, currency },
    });
    expect(parseBody(createSessionBodySchema, { ...session, budget: budget("2500") })).toBeTruthy();
    expect(bodyMessage(createSessionBodySchema, { ...session, budget: budget("025") })).toMatch(
      /^budget\.max_list_cost\.amount: expected minor currency units/,
    );
    expect(parseBody(createSessionBodySchema, { ...session, budget: budget("9".repeat(15)) })).toBeTruthy();
    expect(bodyMessage(createSessionBodySchema, { ...session, budget: budget("1".repeat(16)) })).toMatch(
      /^budget\.max_list_cost\.amount: expected at most 15 digits/,
    );
    expect(bodyMessage(createSessionBodySchema, { ...session, budget: budget("10", "EUR") })).toBe(
      'budget.max_list_cost.currency: expected "USD", got "EUR"',
    );
  });

  it("update accepts vault_ids so the service can refuse them with its own message", () => {
    expect(parseBody(updateSessionBodySchema, { vault_ids: ["vlt_1"] })).toEqual({ vault_ids: ["vlt_1"] });
  });

  it("update accepts title, metadata patch, budget null and agent tools/mcp_servers", () => {
    const body = { title: null, metadata: { a: null }, budget: null, agent: { tools: [], mcp_servers: [] } };
    expect(parseBody(updateSessionBodySchema, body)).toEqual(body);
    expect(bodyMessage(updateSessionBodySchema, { agent: { model: "m" } })).toBe(
      "agent.model: unknown field; remove it",
    );
  });

  it("list query folds statuses[] and defaults order to desc", () => {
    const q = parseQuery(listSessionsQuerySchema, {
      "statuses[]": ["idle", "running"],
      agent_id: "agent_1",
      agent_version: "2",
      "created_at[gt]": "2026-01-01T00:00:00Z",
    });
    expect(q).toEqual({
      statuses: ["idle", "running"],
      agent_id: "agent_1",
      agent_version: 2,
      created_at: { gt: "2026-01-01T00:00:00Z" },
      order: "desc",
      include_archived: false,
      limit: 20,
    });
    expect(parseQuery(listSessionsQuerySchema, { statuses: "idle" }).statuses).toEqual(["idle"]);
  });

  it("an unknown status is named", () => {
    expect(
      failure(() => parseQuery(listSessionsQuerySchema, { "statuses[]": ["idle", "paused"] })).message,
    ).toBe(
      'statuses[1]: unknown status "paused"; expected one of "idle", "running", "rescheduling", "terminated"',
    );
  });

  it("agent_version without agent_id is rejected", () => {
    expect(failure(() => parseQuery(listSessionsQuerySchema, { agent_version: "1" })).message).toMatch(
      /^agent_version: requires agent_id/,
    );
  });

  it("what the SDK can send type-checks against the parsed body shape", () => {
    expectTypeOf<Omit<SessionCreateParams, "betas" | "workspace_id">>().toExtend<
      z_input<typeof createSessionBodySchema>
    >();
    expectTypeOf<Omit<SessionUpdateParams, "betas" | "workspace_id">>().toExtend<
      z_input<typeof updateSessionBodySchema>
    >();
  });
});

// -------------------------------------------------------------------------------------------------
describe("events", () => {
  const send = (...events: unknown[]) => ({ events });

  it("a request carries 1 to 50 events", () => {
    expect(bodyMessage(sendEventsBodySchema, send())).toBe("events: must contain at least one event");
    const fifty = Array.from({ length: 50 }, () => userMessage());
    expect(parseBody(sendEventsBodySchema, { events: fifty }).events).toHaveLength(50);
    expect(bodyMessage(sendEventsBodySchema, { events: [...fifty, userMessage()] })).toBe(
      "events: must contain at most 50 items (got 51)",
    );
  });

  it("an unknown event type is named with the accepted types", () => {
    expect(bodyMessage(sendEventsBodySchema, send({ type: "user.foo" }))).toBe(
      'events[0].type: unknown event type "user.foo"; expected one of "user.message", "user.interrupt", ' +
        '"user.tool_confirmation", "user.custom_tool_result", "user.tool_result", "user.define_outcome", "system.message"',
    );
    expect(bodyMessage(sendEventsBodySchema, send({}))).toMatch(
      /^events\[0\]\.type: is required; expected one of/,
    );
  });

  it("user.message content must be a non-empty array of blocks, not a string", () => {
    expect(bodyMessage(sendEventsBodySchema, send({ type: "user.message", content: "hi" }))).toBe(
      'events[0].content: expected an array of content blocks, e.g. [{"type": "text", "text": "…"}]',
    );
    expect(bodyMessage(sendEventsBodySchema, send({ type: "user.message", content: [] }))).toBe(
      "events[0].content: must contain at least one content block",
    );
    expect(bodyMessage(sendEventsBodySchema, send({ type: "user.message" }))).toBe(
      "events[0].content: is required",
    );
  });

  it("text blocks are 1 to 1,000,000 characters", () => {
    expect(bodyMessage(sendEventsBodySchema, send(userMessage("")))).toBe(
      "events[0].content[0].text: must not be empty",
    );
    expect(parseBody(sendEventsBodySchema, send(userMessage("x".repeat(1_000_000))))).toBeTruthy();
    expect(bodyMessage(sendEventsBodySchema, send(userMessage("x".repeat(1_000_001))))).toBe(
      "events[0].content[0].text: must be at most 1000000 characters",
    );
  });

  it("user.message accepts image, document and redacted blocks", () => {
    const content = [
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
      { type: "document", source: { type: "text", media_type: "text/plain", data: "doc" }, title: "T" },
      { type: "document", source: { type: "file", file_id: "file_1" } },
      { type: "redacted" },
    ];
    expect(parseBody(sendEventsBodySchema, send({ type: "user.message", content }))).toBeTruthy();
    expect(
      bodyMessage(sendEventsBodySchema, send({ type: "user.message", content: [{ type: "search_result" }] })),
    ).toMatch(/^events\[0\]\.content\[0\]\.type: unknown content block type "search_result"/);
  });

  it("base64 images must use a media type the model accepts", () => {
    const image = (media_type: string) => ({
      type: "user.message",
      content: [{ type: "image", source: { type: "base64", media_type, data: "AAAA" } }],
    });
    expect(parseBody(sendEventsBodySchema, send(image("image/webp")))).toBeTruthy();
    expect(bodyMessage(sendEventsBodySchema, send(image("image/tiff")))).toBe(
      'events[0].content[0].source.media_type: expected one of "image/jpeg", "image/png", "image/gif", "image/webp"',
    );
  });

  it("deny_message is only allowed when result is deny", () => {
    const confirm = (result: string, deny_message?: string) => ({
      type: "user.tool_confirmation",
      tool_use_id: "sevt_1",
      result,
      deny_message,
    });
    expect(parseBody(sendEventsBodySchema, send(confirm("deny", "no")))).toBeTruthy();
    expect(parseBody(sendEventsBodySchema, send(confirm("allow")))).toBeTruthy();
    expect(bodyMessage(sendEventsBodySchema, send(confirm("allow", "no")))).toBe(
      'events[0].deny_message: is only allowed when result is "deny"',
    );
    expect(bodyMessage(sendEventsBodySchema, send(confirm("maybe")))).toBe(
      'events[0].result: expected one of "allow", "deny"; got "maybe"',
    );
  });

  it("tool results take optional non-empty ToolResultContent", () => {
    const search = {
      type: "search_result",
      source: "https://example.com",
      title: "t",
      content: [text("x")],
      citations: { enabled: false },
    };
    expect(
      parseBody(
        sendEventsBodySchema,
        send(
          {
            type: "user.custom_tool_result",
            custom_tool_use_id: "sevt_1",
            content: [text("ok"), search],
            is_error: false,
          },
          { type: "user.tool_result", tool_use_id: "sevt_2" },
        ),
      ),
    ).toBeTruthy();
    expect(
      bodyMessage(
        sendEventsBodySchema,
        send({ type: "user.custom_tool_result", custom_tool_use_id: "s", content: [] }),
      ),
    ).toBe("events[0].content: must contain at least 1 item");
  });

  it("user.define_outcome allows at most 20 iterations", () => {
    const outcome = (max_iterations: number) => ({
      type: "user.define_outcome",
      description: "Write a report",
      rubric: { type: "text", content: "Has sections" },
      max_iterations,
    });
    expect(parseBody(sendEventsBodySchema, send(outcome(20)))).toBeTruthy();
    expect(bodyMessage(sendEventsBodySchema, send(outcome(21)))).toBe(
      "events[0].max_iterations: must be at most 20",
    );
  });

  it("user.interrupt may name a thread", () => {
    expect(
      parseBody(sendEventsBodySchema, send({ type: "user.interrupt", session_thread_id: "sthr_1" })),
    ).toBeTruthy();
    expect(parseBody(sendEventsBodySchema, send({ type: "user.interrupt" }))).toBeTruthy();
  });

  it("a system.message right after a user.message, user.tool_result or user.custom_tool_result is accepted", () => {
    expect(parseBody(sendEventsBodySchema, send(userMessage(), systemMessage))).toBeTruthy();
    expect(
      parseBody(sendEventsBodySchema, send({ type: "user.tool_result", tool_use_id: "x" }, systemMessage)),
    ).toBeTruthy();
    expect(
      parseBody(
        sendEventsBodySchema,
        send({ type: "user.custom_tool_result", custom_tool_use_id: "x" }, systemMessage),
      ),
    ).toBeTruthy();
  });

  it("a second system.message in one request is rejected", () => {
    expect(bodyMessage(sendEventsBodySchema, send(userMessage(), systemMessage, systemMessage))).toMatch(
      /^events\[2\]: at most one system\.message is allowed per request/,
    );
  });

  it("a system.message that is not the last event is rejected", () => {
    expect(bodyMessage(sendEventsBodySchema, send(userMessage(), systemMessage, userMessage()))).toBe(
      "events[1]: system.message must be the last event in the request",
    );
  });

  it("a system.message without the event it accompanies is rejected", () => {
    expect(bodyMessage(sendEventsBodySchema, send(systemMessage))).toMatch(
      /^events\[0\]: system\.message must immediately follow the user\.message, user\.tool_result or user\.custom_tool_result/,
    );
    expect(bodyMessage(sendEventsBodySchema, send({ type: "user.interrupt" }, systemMessage))).toMatch(
      /^events\[1\]: system\.message must immediately follow/,
    );
  });

  it("system.message content is text blocks only", () => {
    expect(
      bodyMessage(
        sendEventsBodySchema,
        send(userMessage(), { type: "system.message", content: [{ type: "image" }] }),
      ),
    ).toMatch(/^events\[1\]\.content\[0\]\.type: expected "text", got "image"/);
  });

  it("list query folds types[] and defaults order to asc", () => {
    expect(parseQuery(listEventsQuerySchema, { "types[]": "agent.message" })).toEqual({
      types: ["agent.message"],
      order: "asc",
      limit: 20,
    });
    expect(
      parseQuery(listEventsQuerySchema, {
        types: ["user.message", "session.status_idle"],
        order: "desc",
        limit: "1000",
      }),
    ).toEqual({ types: ["user.message", "session.status_idle"], order: "desc", limit: 1000 });
  });

  it("an unknown types[] value is named", () => {
    expect(
      failure(() => parseQuery(listEventsQuerySchema, { "types[]": ["agent.message", "agent.foo"] })).message,
    ).toMatch(/^types\[1\]: unknown event type "agent\.foo"; expected one of "user\.message"/);
  });

  it("list query created_at accepts gt, gte, lt and lte", () => {
    const raw = {
      "created_at[gt]": "2026-01-01T00:00:00Z",
      "created_at[gte]": "2026-01-01T00:00:00Z",
      "created_at[lt]": "2026-01-02T00:00:00Z",
      "created_at[lte]": "2026-01-02T00:00:00Z",
    };
    expect(parseQuery(listEventsQuerySchema, raw).created_at).toEqual({
      gt: "2026-01-01T00:00:00Z",
      gte: "2026-01-01T00:00:00Z",
      lt: "2026-01-02T00:00:00Z",
      lte: "2026-01-02T00:00:00Z",
    });
  });

  it("stream event_deltas is a subset of agent.message and agent.thinking", () => {
    expect(
      parseQuery(streamEventsQuerySchema, { "event_deltas[]": ["agent.message", "agent.thinking"] }),
    ).toEqual({
      event_deltas: ["agent.message", "agent.thinking"],
    });
    expect(parseQuery(streamEventsQuerySchema, {})).toEqual({});
    expect(
      failure(() => parseQuery(streamEventsQuerySchema, { "event_deltas[]": "agent.tool_use" })).message,
    ).toBe(
      'event_deltas[0]: unknown delta event type "agent.tool_use"; expected one of "agent.message", "agent.thinking"',
    );
  });

  it("the known event types are exactly the SDK's", () => {
    expectTypeOf<SessionEventType>().toEqualTypeOf<BetaManagedAgentsSessionEventType>();
  });

  it("what the SDK can send type-checks against the parsed body shape", () => {
    expectTypeOf<Omit<EventSendParams, "betas" | "workspace_id">>().toExtend<
      z_input<typeof sendEventsBodySchema>
    >();
  });
});
