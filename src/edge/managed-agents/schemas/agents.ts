/**
 * Agents request schemas (wire §2.1; param types from `@anthropic-ai/sdk` resources/beta/agents).
 *
 * Per-field shape and limits only. Rules spanning fields (toolset ↔ mcp_servers references, unique
 * names, the 256-tool cap) live in `validateAgentDefinition`, which runs on the resolved definition.
 * Bodies are strict: an unknown field is a 400 naming it. The SDK strips `betas`/`workspace_id` into
 * headers, so they never legitimately appear in a body.
 */
import { z } from "zod";
import {
  BUILTIN_TOOL_NAMES,
  EFFORT_LEVELS,
  MAX_PERMISSION_RULES,
  SIMPLE_BUILTIN_TOOL_NAMES,
} from "../../../control/agentDefinition.js";
import {
  boundedString,
  checkFreeFormJson,
  createdAtInclusiveRange,
  discriminatorError,
  metadataPatchSchema,
  metadataSchema,
  paginationQuery,
  queryBoolean,
  queryInt,
  requiredString,
} from "./common.js";

export const AGENT_LIMITS = {
  name: 256,
  description: 2048,
  system: 100_000,
  tools: 256,
  mcpServers: 20,
  mcpServerName: 255,
  toolName: 128,
  domains: 64,
  roleArn: 2048,
  roster: 20,
} as const;

// ---------------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------------

export const permissionPolicySchema = z.strictObject({
  type: z.enum(["always_allow", "always_ask", "auto"]),
  // Awaken extension: the operator's rules for `auto` (see control/agentDefinition.ts).
  rules: z
    .array(
      z.strictObject({
        effect: z.enum(["allow", "ask", "deny"]),
        match: z.string().min(1).max(1_000).optional(),
      }),
    )
    .max(MAX_PERMISSION_RULES)
    .optional(),
});

const overrideFields = {
  enabled: z.boolean().nullish(),
  permission_policy: permissionPolicySchema.nullish(),
};

export const toolDefaultConfigSchema = z.strictObject(overrideFields);

/** SDK: plain hostnames, at most 64, an empty list is rejected ("omit the field instead"). */
const domainList = z.array(z.string().min(1).max(253)).min(1).max(AGENT_LIMITS.domains);

function domainsExclusive(config: { allowed_domains?: string[]; blocked_domains?: string[] }): boolean {
  return config.allowed_domains === undefined || config.blocked_domains === undefined;
}
const domainsExclusiveMessage = {
  message: "allowed_domains and blocked_domains cannot be combined; use one of them",
  path: ["blocked_domains"],
};

const toolReference = z.strictObject({ type: z.literal("tool_reference"), name: z.string().min(1) });
const toolReferenceList = z
  .array(toolReference)
  .min(1)
  .max(128)
  .refine((refs) => new Set(refs.map((r) => r.name)).size === refs.length, {
    message: "each tool may be named only once",
  });

const urlSourceFilterObject = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("all") }),
    z.strictObject({ type: z.literal("none") }),
    z.strictObject({ type: z.literal("only"), tools: toolReferenceList }),
    z.strictObject({ type: z.literal("except"), tools: toolReferenceList }),
  ],
  { error: discriminatorError("url source filter type") },
);
/** Accepts the shorthands `"all"`/`"none"` (SDK `WebFetchURLSourceShorthand`). */
const urlSourceFilter = z.union([z.enum(["all", "none"]), urlSourceFilterObject], {
  error: 'expected "all", "none" or an object {"type": "all"|"none"|"only"|"except", …}',
});
const urlSourceUserInput = z.union(
  [z.enum(["all", "none"]), z.strictObject({ type: z.enum(["all", "none"]) })],
  { error: 'expected "all", "none", {"type": "all"} or {"type": "none"}' },
);

function isNone(v: unknown): boolean {
  return v === "none" || (typeof v === "object" && v !== null && Reflect.get(v, "type") === "none");
}

const urlSourcesSchema = z
  .strictObject({
    client_tool_results: urlSourceFilter.nullish(),
    server_tool_results: urlSourceFilter.nullish(),
    user_input: urlSourceUserInput.nullish(),
  })
  .refine((s) => !(isNone(s.client_tool_results) && isNone(s.server_tool_results) && isNone(s.user_input)), {
    message: 'setting every source to "none" would forbid all fetches; disable web_fetch instead',
  })
  .refine(
    (s) => {
      const f = s.server_tool_results;
      if (typeof f !== "object" || f === null || !("tools" in f)) return true;
      return f.tools.every((t) => t.name === "web_search" || t.name === "web_fetch");
    },
    {
      message: 'server_tool_results may only name "web_search" or "web_fetch"',
      path: ["server_tool_results"],
    },
  );

const userLocationSchema = z.strictObject({
  type: z.literal("approximate"),
  city: z.string().nullish(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, { error: "expected a two-letter uppercase ISO 3166-1 country code" })
    .nullish(),
  region: z.string().nullish(),
  timezone: z.string().nullish(),
});

const simpleToolConfig = z
  .strictObject({
    name: z.enum(SIMPLE_BUILTIN_TOOL_NAMES),
    type: z.enum(SIMPLE_BUILTIN_TOOL_NAMES).optional(),
    ...overrideFields,
  })
  .refine((c) => c.type === undefined || c.type === c.name, { message: "must equal name", path: ["type"] });

const webFetchToolConfig = z
  .strictObject({
    name: z.literal("web_fetch"),
    type: z.literal("web_fetch").optional(),
    ...overrideFields,
    allowed_domains: domainList.optional(),
    blocked_domains: domainList.optional(),
    max_content_tokens: z.number().int().min(1).nullish(),
    url_sources: urlSourcesSchema.nullish(),
  })
  .refine(domainsExclusive, domainsExclusiveMessage);

const webSearchToolConfig = z
  .strictObject({
    name: z.literal("web_search"),
    type: z.literal("web_search").optional(),
    ...overrideFields,
    allowed_domains: domainList.optional(),
    blocked_domains: domainList.optional(),
    user_location: userLocationSchema.nullish(),
  })
  .refine(domainsExclusive, domainsExclusiveMessage);

export const toolConfigSchema = z.discriminatedUnion(
  "name",
  [simpleToolConfig, webFetchToolConfig, webSearchToolConfig],
  {
    error: discriminatorError("built-in tool name"),
  },
);

const agentToolsetSchema = z.strictObject({
  type: z.literal("agent_toolset_20260401"),
  default_config: toolDefaultConfigSchema.nullish(),
  configs: z.array(toolConfigSchema).max(BUILTIN_TOOL_NAMES.length).optional(),
});

const mcpToolsetSchema = z.strictObject({
  type: z.literal("mcp_toolset"),
  mcp_server_name: boundedString(1, AGENT_LIMITS.mcpServerName),
  default_config: toolDefaultConfigSchema.nullish(),
  configs: z
    .array(z.strictObject({ name: boundedString(1, AGENT_LIMITS.toolName), ...overrideFields }))
    .max(AGENT_LIMITS.tools)
    .optional(),
});

export const CUSTOM_TOOL_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * JSON Schema for the tool input: an object schema; other keywords pass through untouched, within
 * the free-form bounds (agent resolution and the model adapters walk it recursively).
 */
const inputSchemaSchema = z
  .looseObject({
    type: z.literal("object", { error: 'input_schema must be a JSON Schema with "type": "object"' }),
    properties: z.record(z.string(), z.unknown()).nullish(),
    required: z.array(z.string()).nullish(),
  })
  .superRefine(checkFreeFormJson);

const customToolSchema = z.strictObject({
  type: z.literal("custom"),
  name: z.string().regex(CUSTOM_TOOL_NAME, {
    error: "expected 1-128 characters of letters, digits, underscores or hyphens",
  }),
  description: z.string(),
  input_schema: inputSchemaSchema,
});

export const toolSchema = z.discriminatedUnion(
  "type",
  [agentToolsetSchema, mcpToolsetSchema, customToolSchema],
  {
    error: discriminatorError("tool type"),
  },
);
export const toolsSchema = z.array(toolSchema).max(AGENT_LIMITS.tools);

// ---------------------------------------------------------------------------------------------------
// Servers, skills, model, multiagent, execution identity
// ---------------------------------------------------------------------------------------------------

const urlMcpServerSchema = z.strictObject({
  name: boundedString(1, AGENT_LIMITS.mcpServerName),
  type: z.literal("url"),
  url: z.url({ protocol: /^https?$/, error: "expected an http(s) URL" }),
});

/** Argv and environment bounds of a stdio server (bytes are what execve takes). */
export const STDIO_LIMITS = {
  command: 4096,
  arg: 8192,
  args: 256,
  env: 64,
  envValue: 32_768,
} as const;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A command-line string: no NUL (it could never reach execve whole). */
const argvString = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !value.includes("\0"), { error: "must not contain a NUL character" });

/**
 * Awaken extension: a stdio MCP server run inside the session's sandbox. `command` is argv[0]
 * (resolved on the sandbox's PATH): never an option, so it cannot be read as one by the launcher.
 */
const stdioMcpServerSchema = z.strictObject({
  name: boundedString(1, AGENT_LIMITS.mcpServerName),
  type: z.literal("stdio"),
  command: argvString(STDIO_LIMITS.command)
    .min(1, { error: "must not be empty" })
    .refine((value) => !value.startsWith("-"), {
      error: "must be a program name or path, not an option (it starts with '-')",
    })
    .refine((value) => value.trim() === value, { error: "must not start or end with whitespace" }),
  args: z.array(argvString(STDIO_LIMITS.arg)).max(STDIO_LIMITS.args).nullish(),
  env: z
    .record(
      z.string().regex(ENV_NAME, {
        error: "a variable name is letters, digits and '_', not starting with a digit",
      }),
      z.union(
        [
          argvString(STDIO_LIMITS.envValue),
          z.strictObject({
            type: z.literal("vault_credential"),
            secret_name: z.string().regex(ENV_NAME, { error: "expected a variable name" }),
          }),
        ],
        { error: 'expected a string or {"type":"vault_credential","secret_name":…}' },
      ),
    )
    .refine((env) => Object.keys(env).length <= STDIO_LIMITS.env, {
      error: `must name at most ${STDIO_LIMITS.env} variables`,
    })
    .refine((env) => !Object.keys(env).some((name) => name.startsWith("LD_")), {
      error: "LD_* variables (the dynamic loader's) cannot be set",
    })
    .nullish(),
});

export const mcpServerSchema = z
  .unknown()
  .superRefine((value, context) => {
    // One transport per server: a URL server with a command (or a stdio one with a URL) is a
    // mistake worth naming, not an "unknown field".
    if (typeof value !== "object" || value === null) return;
    const has = (key: string) => Object.hasOwn(value, key);
    if (has("url") && (has("command") || has("args") || has("env"))) {
      context.addIssue({
        code: "custom",
        message:
          'a server has either a url (type "url") or a command (type "stdio", with args and env), not both',
      });
    }
  })
  .pipe(
    z.discriminatedUnion("type", [urlMcpServerSchema, stdioMcpServerSchema], {
      error: discriminatorError("MCP server type"),
    }),
  );
export const mcpServersSchema = z.array(mcpServerSchema).max(AGENT_LIMITS.mcpServers);

export const skillSchema = z.strictObject({
  type: z.enum(["anthropic", "custom"]),
  skill_id: requiredString,
  version: z.string().min(1).nullish(),
});
export const skillsSchema = z.array(skillSchema);

const effortLevel = z.enum(EFFORT_LEVELS);
const modelConfigSchema = z.strictObject({
  id: requiredString,
  /** Bare level or `{type}`; the stored form is always the object. */
  effort: z
    .union([effortLevel, z.strictObject({ type: effortLevel })], {
      error: `expected one of ${EFFORT_LEVELS.map((l) => `"${l}"`).join(", ")}, bare or as {"type": …}`,
    })
    .nullish(),
  speed: z.enum(["standard", "fast"]).nullish(),
  inference_geo: z.string().min(1).nullish(),
});
/** Model id string (an open set: e.g. `claude-opus-5-5`) or a model config object. */
export const modelSchema = z.union([requiredString, modelConfigSchema], {
  error: 'expected a model id string or an object {"id": …, "effort"?, "speed"?, "inference_geo"?}',
});

const agentReference = z.strictObject({
  type: z.literal("agent"),
  id: requiredString,
  version: z.number().int().min(1).optional(),
});
const selfReference = z.strictObject({ type: z.literal("self") });
const advisorReference = z.strictObject({ type: z.literal("advisor"), model: requiredString });
const rosterEntry = z.union([requiredString, agentReference, selfReference, advisorReference], {
  error: 'expected an agent id string or {"type": "agent"|"self"|"advisor", …}',
});
const predefinedAgent = z.union([requiredString, agentReference, selfReference], {
  error: 'expected an agent id string or {"type": "agent"|"self", …}',
});
const toggle = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("enabled") }),
  z.strictObject({ type: z.literal("disabled") }),
]);
const spawner = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("enabled"),
    inline_agents: toggle.nullish(),
    predefined_agents: z.array(predefinedAgent).max(AGENT_LIMITS.roster).nullish(),
  }),
  z.strictObject({ type: z.literal("disabled") }),
]);

/** Stored and echoed as sent (wire §2.1); roster resolution needs storage and happens in the service. */
export const multiagentSchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({
      type: z.literal("coordinator"),
      agents: z.array(rosterEntry).min(1).max(AGENT_LIMITS.roster),
    }),
    z.strictObject({
      type: z.literal("multiagent_20261001"),
      advisor: z
        .discriminatedUnion("type", [
          z.strictObject({ type: z.literal("enabled"), model: requiredString }),
          z.strictObject({ type: z.literal("disabled") }),
        ])
        .nullish(),
      subagents: spawner.nullish(),
      workflows: spawner.nullish(),
    }),
  ],
  { error: discriminatorError("multiagent type") },
);

export const executionIdentitySchema = z.discriminatedUnion(
  "type",
  [
    z.strictObject({ type: z.literal("service_account") }),
    z.strictObject({ type: z.literal("aws_role"), role_arn: boundedString(1, AGENT_LIMITS.roleArn) }),
  ],
  { error: discriminatorError("execution identity type") },
);

// ---------------------------------------------------------------------------------------------------
// Bodies and queries
// ---------------------------------------------------------------------------------------------------

const descriptionSchema = boundedString(0, AGENT_LIMITS.description);
const systemSchema = boundedString(0, AGENT_LIMITS.system);

/** POST /v1/agents */
export const createAgentBodySchema = z.strictObject({
  name: boundedString(1, AGENT_LIMITS.name),
  model: modelSchema,
  description: descriptionSchema.nullish(),
  system: systemSchema.nullish(),
  tools: toolsSchema.optional(),
  mcp_servers: mcpServersSchema.optional(),
  skills: skillsSchema.optional(),
  metadata: metadataSchema.optional(),
  multiagent: multiagentSchema.nullish(),
  execution_identity: executionIdentitySchema.nullish(),
});
export type CreateAgentBody = z.output<typeof createAgentBodySchema>;

/**
 * POST /v1/agents/{id}. `name` and `model` cannot be cleared, so they are not nullable; the
 * replacement lists accept `null` ("send empty array or null to clear").
 */
export const updateAgentBodySchema = z.strictObject({
  name: boundedString(1, AGENT_LIMITS.name).optional(),
  model: modelSchema.optional(),
  description: descriptionSchema.nullish(),
  system: systemSchema.nullish(),
  tools: toolsSchema.nullish(),
  mcp_servers: mcpServersSchema.nullish(),
  skills: skillsSchema.nullish(),
  metadata: metadataPatchSchema.nullish(),
  multiagent: multiagentSchema.nullish(),
  execution_identity: executionIdentitySchema.nullish(),
  version: z.number().int().min(1).optional(),
});
export type UpdateAgentBody = z.output<typeof updateAgentBodySchema>;

/** GET /v1/agents */
export const listAgentsQuerySchema = z.strictObject({
  created_at: createdAtInclusiveRange.optional(),
  include_archived: queryBoolean.default(false),
  ...paginationQuery,
});
export type ListAgentsQuery = z.output<typeof listAgentsQuerySchema>;

/** GET /v1/agents/{id}: `version` omitted = latest. */
export const retrieveAgentQuerySchema = z.strictObject({
  version: queryInt(1).optional(),
});
export type RetrieveAgentQuery = z.output<typeof retrieveAgentQuerySchema>;

/** GET /v1/agents/{id}/versions */
export const listAgentVersionsQuerySchema = z.strictObject({ ...paginationQuery });
export type ListAgentVersionsQuery = z.output<typeof listAgentVersionsQuerySchema>;
