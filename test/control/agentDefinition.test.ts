import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type {
  AgentCreateInput,
  AgentDefinition,
  AgentToolInput,
  AgentToolset,
  McpToolset,
  WebFetchToolConfig,
} from "../../src/control/agentDefinition.js";
import {
  applyAgentUpdate,
  countTools,
  resolveAgentCreate,
  resolveTool,
  validateAgentDefinition,
} from "../../src/control/agentResolution.js";
import { AwakenError } from "../../src/kernel/errors.js";
import { applyMetadataPatch } from "../../src/kernel/metadata.js";

const base: AgentCreateInput = { name: "Agent", model: "claude-opus-5-5" };

function rejects(fn: () => unknown, code: string, message: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AwakenError);
    expect((err as AwakenError).code).toBe(code);
    expect((err as AwakenError).message).toMatch(message);
    return;
  }
  throw new Error("expected an AwakenError");
}

const mcp = (name: string) => ({ name, type: "url" as const, url: `https://${name}.example.com/mcp` });
const mcpToolset = (name: string): AgentToolInput => ({ type: "mcp_toolset", mcp_server_name: name });
const custom = (name: string): AgentToolInput => ({
  type: "custom",
  name,
  description: "d",
  input_schema: { type: "object" },
});

describe("resolveAgentCreate", () => {
  it("fills every optional field with its resolved default", () => {
    expect(resolveAgentCreate(base)).toEqual({
      name: "Agent",
      description: null,
      system: null,
      model: { id: "claude-opus-5-5" },
      tools: [],
      mcp_servers: [],
      skills: [],
      metadata: {},
      multiagent: null,
      execution_identity: { type: "service_account" },
    });
  });

  it("normalises a bare effort level to {type}", () => {
    const def = resolveAgentCreate({
      ...base,
      model: { id: "m", effort: "high", speed: "fast", inference_geo: "us" },
    });
    expect(def.model).toEqual({ id: "m", effort: { type: "high" }, speed: "fast", inference_geo: "us" });
  });

  it("drops null model options instead of storing null", () => {
    const def = resolveAgentCreate({
      ...base,
      model: { id: "m", effort: null, speed: null, inference_geo: null },
    });
    expect(def.model).toEqual({ id: "m" });
  });

  it("built-in toolset defaults to enabled + always_allow and configs inherit the toolset default", () => {
    const def = resolveAgentCreate({
      ...base,
      tools: [
        { type: "agent_toolset_20260401", configs: [{ name: "bash" }, { name: "read", enabled: false }] },
      ],
    });
    expect(def.tools[0]).toEqual({
      type: "agent_toolset_20260401",
      default_config: { enabled: true, permission_policy: { type: "always_allow" } },
      configs: [
        { name: "bash", type: "bash", enabled: true, permission_policy: { type: "always_allow" } },
        { name: "read", type: "read", enabled: false, permission_policy: { type: "always_allow" } },
      ],
    });
  });

  it("mcp_toolset defaults to always_ask", () => {
    const def = resolveAgentCreate({ ...base, mcp_servers: [mcp("gh")], tools: [mcpToolset("gh")] });
    expect(def.tools[0]).toEqual({
      type: "mcp_toolset",
      mcp_server_name: "gh",
      default_config: { enabled: true, permission_policy: { type: "always_ask" } },
      configs: [],
    });
  });

  it("a config's own policy wins over the toolset default, which wins over the built-in default", () => {
    const tool = resolveTool({
      type: "mcp_toolset",
      mcp_server_name: "gh",
      default_config: { permission_policy: { type: "auto" }, enabled: null },
      configs: [
        { name: "a" },
        { name: "b", permission_policy: { type: "always_allow" } },
        { name: "c", enabled: false },
      ],
    }) as McpToolset;
    expect(tool.default_config).toEqual({ enabled: true, permission_policy: { type: "auto" } });
    expect(tool.configs).toEqual([
      { name: "a", enabled: true, permission_policy: { type: "auto" } },
      { name: "b", enabled: true, permission_policy: { type: "always_allow" } },
      { name: "c", enabled: false, permission_policy: { type: "auto" } },
    ]);
  });

  it("web_fetch keeps its extra fields and resolves url_sources shorthands to objects", () => {
    const tool = resolveTool({
      type: "agent_toolset_20260401",
      configs: [
        {
          name: "web_fetch",
          allowed_domains: ["docs.example.com"],
          max_content_tokens: 1000,
          url_sources: { user_input: "none", server_tool_results: "all" },
        },
        {
          name: "web_search",
          blocked_domains: ["ads.example.com"],
          user_location: { type: "approximate", city: "Oslo" },
        },
      ],
    }) as AgentToolset;
    const fetch = tool.configs[0] as WebFetchToolConfig;
    expect(fetch).toMatchObject({
      name: "web_fetch",
      type: "web_fetch",
      allowed_domains: ["docs.example.com"],
    });
    expect(fetch.max_content_tokens).toBe(1000);
    expect(fetch.url_sources).toEqual({
      client_tool_results: null,
      server_tool_results: { type: "all" },
      user_input: { type: "none" },
    });
    expect(tool.configs[1]).toMatchObject({
      name: "web_search",
      blocked_domains: ["ads.example.com"],
      user_location: { type: "approximate", city: "Oslo" },
    });
  });

  it("web_fetch without url_sources resolves it to null", () => {
    const tool = resolveTool({
      type: "agent_toolset_20260401",
      configs: [{ name: "web_fetch" }],
    }) as AgentToolset;
    expect((tool.configs[0] as WebFetchToolConfig).url_sources).toBeNull();
  });

  it("a skill without a version pins 'latest'", () => {
    const def = resolveAgentCreate({ ...base, skills: [{ type: "anthropic", skill_id: "xlsx" }] });
    expect(def.skills).toEqual([{ type: "anthropic", skill_id: "xlsx", version: "latest" }]);
  });

  it("execution_identity null and service_account both store the default; aws_role is kept", () => {
    expect(resolveAgentCreate({ ...base, execution_identity: null }).execution_identity).toEqual({
      type: "service_account",
    });
    const role = { type: "aws_role" as const, role_arn: "arn:aws:iam::1:role/x" };
    expect(resolveAgentCreate({ ...base, execution_identity: role }).execution_identity).toEqual(role);
  });

  it("does not alias the input's nested objects", () => {
    const schema: { type: "object"; x?: number } = { type: "object" };
    const multiagent = { type: "coordinator", agents: ["a"] };
    const def = resolveAgentCreate({
      ...base,
      tools: [{ type: "custom", name: "t", description: "d", input_schema: schema }],
      multiagent,
    });
    schema.x = 1;
    multiagent.agents.push("b");
    expect(def.multiagent).toEqual({ type: "coordinator", agents: ["a"] });
    expect(def.tools[0]).toEqual({
      type: "custom",
      name: "t",
      description: "d",
      input_schema: { type: "object" },
    });
  });

  it("resolving an already resolved tool changes nothing", () => {
    const toolArb = fc.oneof(
      fc.record({
        type: fc.constant("agent_toolset_20260401" as const),
        default_config: fc.option(
          fc.record({
            enabled: fc.option(fc.boolean()),
            permission_policy: fc.option(
              fc.record({
                type: fc.constantFrom("always_allow" as const, "always_ask" as const, "auto" as const),
              }),
            ),
          }),
        ),
        configs: fc.uniqueArray(
          fc.record({
            name: fc.constantFrom("bash" as const, "edit" as const, "grep" as const),
            enabled: fc.option(fc.boolean()),
          }),
          { selector: (c) => c.name },
        ),
      }),
      fc.record({
        type: fc.constant("mcp_toolset" as const),
        mcp_server_name: fc.string({ minLength: 1 }),
        configs: fc.array(fc.record({ name: fc.string({ minLength: 1 }), enabled: fc.option(fc.boolean()) })),
      }),
    );
    fc.assert(
      fc.property(toolArb, (input) => {
        const once = resolveTool(input);
        expect(resolveTool(once)).toEqual(once);
      }),
    );
  });
});

describe("validateAgentDefinition", () => {
  it("an mcp server that no mcp_toolset references is rejected, saying how to fix it", () => {
    rejects(
      () => resolveAgentCreate({ ...base, mcp_servers: [mcp("gh")] }),
      "invalid_request",
      /mcp_servers: "gh" is not referenced by any mcp_toolset; add \{"type":"mcp_toolset","mcp_server_name":"gh"\}/,
    );
  });

  it("an mcp_toolset naming a server that is not in mcp_servers is rejected", () => {
    rejects(
      () => resolveAgentCreate({ ...base, tools: [mcpToolset("nope")] }),
      "invalid_request",
      /mcp_server_name "nope", which is not in mcp_servers/,
    );
  });

  it("two mcp_toolsets for the same server are rejected", () => {
    rejects(
      () =>
        resolveAgentCreate({
          ...base,
          mcp_servers: [mcp("gh")],
          tools: [mcpToolset("gh"), mcpToolset("gh")],
        }),
      "invalid_request",
      /"gh" is referenced by more than one mcp_toolset/,
    );
  });

  it("mcp server names must be unique", () => {
    rejects(
      () => resolveAgentCreate({ ...base, mcp_servers: [mcp("gh"), mcp("gh")], tools: [mcpToolset("gh")] }),
      "invalid_request",
      /mcp_servers: the name "gh" is used more than once/,
    );
  });

  it("custom tool names must be unique", () => {
    rejects(
      () => resolveAgentCreate({ ...base, tools: [custom("t"), custom("t")] }),
      "invalid_request",
      /custom tool name "t" is used more than once/,
    );
  });

  it("a custom tool may not take a built-in name while the built-in toolset is present", () => {
    rejects(
      () => resolveAgentCreate({ ...base, tools: [{ type: "agent_toolset_20260401" }, custom("bash")] }),
      "invalid_request",
      /custom tool "bash" clashes with the built-in tool/,
    );
    expect(resolveAgentCreate({ ...base, tools: [custom("bash")] }).tools).toHaveLength(1);
  });

  it("at most one agent_toolset_20260401", () => {
    rejects(
      () =>
        resolveAgentCreate({
          ...base,
          tools: [{ type: "agent_toolset_20260401" }, { type: "agent_toolset_20260401" }],
        }),
      "invalid_request",
      /at most one agent_toolset_20260401/,
    );
  });

  it("a toolset may configure each tool only once", () => {
    rejects(
      () =>
        resolveAgentCreate({
          ...base,
          tools: [
            { type: "agent_toolset_20260401", configs: [{ name: "bash" }, { name: "bash", enabled: false }] },
          ],
        }),
      "invalid_request",
      /configures "bash" more than once/,
    );
  });

  it("web_fetch url_sources may only name custom tools of the same agent", () => {
    const withFilter = (names: string[]): AgentCreateInput => ({
      ...base,
      tools: [
        custom("lookup"),
        {
          type: "agent_toolset_20260401",
          configs: [
            {
              name: "web_fetch",
              url_sources: {
                client_tool_results: {
                  type: "only",
                  tools: names.map((name) => ({ type: "tool_reference", name })),
                },
              },
            },
          ],
        },
      ],
    });
    expect(() => resolveAgentCreate(withFilter(["lookup"]))).not.toThrow();
    rejects(() => resolveAgentCreate(withFilter(["missing"])), "invalid_request", /names "missing"/);
  });

  it("more than 256 tools across toolsets is rejected; the built-in toolset counts as 8", () => {
    const customs = Array.from({ length: 248 }, (_, i) => custom(`t${i}`));
    const ok = resolveAgentCreate({ ...base, tools: [{ type: "agent_toolset_20260401" }, ...customs] });
    expect(countTools(ok.tools)).toBe(256);
    rejects(
      () =>
        resolveAgentCreate({
          ...base,
          tools: [{ type: "agent_toolset_20260401" }, ...customs, custom("one_more")],
        }),
      "invalid_request",
      /at most 256 tools are allowed across all toolsets \(got 257/,
    );
  });

  it("an mcp_toolset counts as its configured tools, at least one", () => {
    const def = resolveAgentCreate({
      ...base,
      mcp_servers: [mcp("a"), mcp("b")],
      tools: [
        mcpToolset("a"),
        { type: "mcp_toolset", mcp_server_name: "b", configs: [{ name: "x" }, { name: "y" }] },
      ],
    });
    expect(countTools(def.tools)).toBe(3);
  });

  it("metadata limits fail with invalid_metadata", () => {
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    rejects(() => resolveAgentCreate({ ...base, metadata: many }), "invalid_metadata", /at most 16 keys/);
    rejects(
      () => resolveAgentCreate({ ...base, metadata: { ["k".repeat(65)]: "v" } }),
      "invalid_metadata",
      /keys must be 1-64 characters \(got 65\)/,
    );
    rejects(
      () => resolveAgentCreate({ ...base, metadata: { k: "v".repeat(513) } }),
      "invalid_metadata",
      /values must be at most 512 characters \(got 513\)/,
    );
    const edge = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, "k"), "v".repeat(512)]),
    );
    expect(() => resolveAgentCreate({ ...base, metadata: edge })).not.toThrow();
  });

  it("accepts a definition that references every server exactly once", () => {
    const def = resolveAgentCreate({
      ...base,
      mcp_servers: [mcp("a"), mcp("b")],
      tools: [mcpToolset("b"), mcpToolset("a")],
    });
    expect(() => validateAgentDefinition(def)).not.toThrow();
  });
});

describe("applyAgentUpdate", () => {
  const current: AgentDefinition = resolveAgentCreate({
    name: "Agent",
    description: "desc",
    system: "sys",
    model: { id: "m1", effort: "high", inference_geo: "eu", speed: "fast" },
    tools: [custom("t")],
    skills: [{ type: "custom", skill_id: "skill_1", version: "3" }],
    metadata: { a: "1", b: "2" },
    multiagent: { type: "coordinator", agents: ["agent_x"] },
    execution_identity: { type: "aws_role", role_arn: "arn" },
  });

  it("an empty update keeps everything and returns a copy", () => {
    const next = applyAgentUpdate(current, {});
    expect(next).toEqual(current);
    expect(next).not.toBe(current);
    expect(next.tools).not.toBe(current.tools);
  });

  it("null or an empty string clears description and system", () => {
    expect(applyAgentUpdate(current, { description: null, system: "" })).toMatchObject({
      description: null,
      system: null,
    });
    expect(applyAgentUpdate(current, { description: "", system: null })).toMatchObject({
      description: null,
      system: null,
    });
  });

  it("tools, mcp_servers and skills are replaced wholesale; null clears them", () => {
    const next = applyAgentUpdate(current, { tools: [custom("u")], skills: null });
    expect(next.tools).toEqual([
      { type: "custom", name: "u", description: "d", input_schema: { type: "object" } },
    ]);
    expect(next.skills).toEqual([]);
    expect(applyAgentUpdate(current, { tools: null, mcp_servers: null })).toMatchObject({
      tools: [],
      mcp_servers: [],
    });
  });

  it("replacing tools is validated against the resulting mcp_servers", () => {
    rejects(
      () => applyAgentUpdate(current, { mcp_servers: [mcp("gh")] }),
      "invalid_request",
      /"gh" is not referenced by any mcp_toolset/,
    );
    const next = applyAgentUpdate(current, { mcp_servers: [mcp("gh")], tools: [mcpToolset("gh")] });
    expect(next.mcp_servers).toEqual([mcp("gh")]);
  });

  it("metadata is a patch: strings upsert, null deletes, missing keys are untouched", () => {
    const next = applyAgentUpdate(current, { metadata: { a: null, c: "3", b: "two", zz: null } });
    expect(next.metadata).toEqual({ b: "two", c: "3" });
    expect(applyAgentUpdate(current, { metadata: null }).metadata).toEqual(current.metadata);
  });

  it("a metadata patch that would exceed 16 keys fails with invalid_metadata", () => {
    const patch = Object.fromEntries(Array.from({ length: 15 }, (_, i) => [`n${i}`, "v"]));
    rejects(
      () => applyAgentUpdate(current, { metadata: patch }),
      "invalid_metadata",
      /at most 16 keys are allowed \(got 17\)/,
    );
  });

  it("model given as a string replaces the model but keeps the stored effort", () => {
    expect(applyAgentUpdate(current, { model: "m2" }).model).toEqual({ id: "m2", effort: { type: "high" } });
  });

  it("model given as an object is whole-object replacement except an omitted effort, which is kept", () => {
    expect(applyAgentUpdate(current, { model: { id: "m2" } }).model).toEqual({
      id: "m2",
      effort: { type: "high" },
    });
    expect(applyAgentUpdate(current, { model: { id: "m2", effort: "low" } }).model).toEqual({
      id: "m2",
      effort: { type: "low" },
    });
    expect(applyAgentUpdate(current, { model: { id: "m2", effort: null } }).model).toEqual({ id: "m2" });
  });

  it("multiagent null clears it; execution_identity null restores the service account", () => {
    const next = applyAgentUpdate(current, { multiagent: null, execution_identity: null });
    expect(next.multiagent).toBeNull();
    expect(next.execution_identity).toEqual({ type: "service_account" });
  });

  it("multiagent given is full replacement", () => {
    const next = applyAgentUpdate(current, { multiagent: { type: "multiagent_20261001" } });
    expect(next.multiagent).toEqual({ type: "multiagent_20261001" });
  });

  it("name is replaced when given", () => {
    expect(applyAgentUpdate(current, { name: "Renamed" }).name).toBe("Renamed");
  });

  it("does not mutate the current definition", () => {
    const snapshot = structuredClone(current);
    applyAgentUpdate(current, { metadata: { a: null }, tools: null, description: null });
    expect(current).toEqual(snapshot);
  });
});

describe("applyMetadataPatch", () => {
  it('environments treat "" as delete; agents store it', () => {
    expect(applyMetadataPatch({ a: "1" }, { a: "" }, { emptyStringDeletes: true })).toEqual({});
    expect(applyMetadataPatch({ a: "1" }, { a: "" })).toEqual({ a: "" });
  });

  it("every upsert is present, every null is absent, other keys are unchanged", () => {
    const bag = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ maxLength: 8 }), {
      maxKeys: 6,
    });
    const patch = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 8 }),
      fc.option(fc.string({ maxLength: 8 })),
      {
        maxKeys: 6,
      },
    );
    fc.assert(
      fc.property(bag, patch, (current, p) => {
        const next = applyMetadataPatch(current, p);
        for (const [k, v] of Object.entries(p)) {
          if (v === null) expect(Object.hasOwn(next, k)).toBe(false);
          else expect(next[k]).toBe(v);
        }
        for (const [k, v] of Object.entries(current)) {
          if (!Object.hasOwn(p, k)) expect(next[k]).toBe(v);
        }
      }),
    );
  });
});
