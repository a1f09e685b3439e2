import { a2aModelProblem, isA2aModel } from "../kernel/a2aModel.js";
import { acpModelProblem, isAcpModel } from "../kernel/acpModel.js";
import { AwakenError } from "../kernel/errors.js";
import { applyMetadataPatch, assertValidMetadata } from "../kernel/metadata.js";
import {
  type AgentCreateInput,
  type AgentDefinition,
  type AgentTool,
  type AgentToolInput,
  type AgentToolset,
  type AgentUpdateInput,
  BUILTIN_TOOL_NAMES,
  type CustomTool,
  DEFAULT_BUILTIN_PERMISSION_POLICY,
  DEFAULT_MCP_PERMISSION_POLICY,
  DEFAULT_TOOL_ENABLED,
  type EffortLevel,
  type ExecutionIdentityInput,
  LATEST_SKILL_VERSION,
  MAX_TOOLS,
  type McpServer,
  type McpServerInput,
  type McpToolset,
  type ModelConfig,
  type ModelInput,
  type PermissionPolicy,
  type Skill,
  type SkillInput,
  type StdioEnvValue,
  type ToolConfig,
  type ToolConfigBase,
  type ToolConfigInput,
  type ToolDefaultConfig,
  type ToolDefaultConfigInput,
  type UrlSourceFilter,
  type UrlSourceFilterInput,
  type UrlSources,
  type UrlSourcesInput,
  type WebFetchToolConfig,
  type WebSearchToolConfig,
} from "./agentDefinition.js";

/**
 * Pure rules that turn parsed agent requests into a resolved AgentDefinition (defaults, update
 * semantics) and check what per-field schemas cannot see. No I/O.
 */
// ---------------------------------------------------------------------------------------------------
// Resolution
// ---------------------------------------------------------------------------------------------------

function resolveDefaultConfig(
  input: ToolDefaultConfigInput | null | undefined,
  fallbackPolicy: PermissionPolicy,
): ToolDefaultConfig {
  return {
    enabled: input?.enabled ?? DEFAULT_TOOL_ENABLED,
    permission_policy: resolvePolicy(input?.permission_policy ?? fallbackPolicy),
  };
}

/** Rules only mean something to `auto`; elsewhere they are refused rather than silently kept. */
function resolvePolicy(policy: PermissionPolicy): PermissionPolicy {
  const rules = policy.rules ?? [];
  if (rules.length > 0 && policy.type !== "auto") {
    fail(`permission_policy.rules apply only to {"type":"auto"}; "${policy.type}" takes no rules`);
  }
  return rules.length > 0
    ? {
        type: policy.type,
        rules: rules.map((r) => (r.match === undefined ? { effect: r.effect } : { ...r })),
      }
    : { type: policy.type };
}

/** A per-tool override inherits whatever it leaves unset from its toolset's resolved default. */
function resolveOverride(input: ToolDefaultConfigInput, defaults: ToolDefaultConfig): ToolConfigBase {
  return {
    enabled: input.enabled ?? defaults.enabled,
    permission_policy: resolvePolicy(input.permission_policy ?? defaults.permission_policy),
  };
}

function resolveUrlFilter(input: UrlSourceFilterInput | null | undefined): UrlSourceFilter | null {
  if (input === null || input === undefined) return null;
  if (input === "all" || input === "none") return { type: input };
  return input.type === "only" || input.type === "except"
    ? { type: input.type, tools: input.tools.map((t) => ({ type: "tool_reference", name: t.name })) }
    : { type: input.type };
}

function resolveUrlSources(input: UrlSourcesInput | null | undefined): UrlSources | null {
  if (input === null || input === undefined) return null;
  const userInput = input.user_input;
  return {
    client_tool_results: resolveUrlFilter(input.client_tool_results),
    server_tool_results: resolveUrlFilter(input.server_tool_results),
    user_input:
      userInput === null || userInput === undefined
        ? null
        : { type: typeof userInput === "string" ? userInput : userInput.type },
  };
}

function resolveToolConfig(input: ToolConfigInput, defaults: ToolDefaultConfig): ToolConfig {
  const base = resolveOverride(input, defaults);
  switch (input.name) {
    case "web_fetch": {
      const out: WebFetchToolConfig = {
        name: "web_fetch",
        type: "web_fetch",
        ...base,
        url_sources: resolveUrlSources(input.url_sources),
      };
      if (input.allowed_domains !== undefined) out.allowed_domains = [...input.allowed_domains];
      if (input.blocked_domains !== undefined) out.blocked_domains = [...input.blocked_domains];
      if (input.max_content_tokens !== undefined) out.max_content_tokens = input.max_content_tokens;
      return out;
    }
    case "web_search": {
      const out: WebSearchToolConfig = { name: "web_search", type: "web_search", ...base };
      if (input.allowed_domains !== undefined) out.allowed_domains = [...input.allowed_domains];
      if (input.blocked_domains !== undefined) out.blocked_domains = [...input.blocked_domains];
      if (input.user_location !== undefined) out.user_location = input.user_location;
      return out;
    }
    default:
      return { name: input.name, type: input.name, ...base };
  }
}

export function resolveTool(input: AgentToolInput): AgentTool {
  switch (input.type) {
    case "agent_toolset_20260401": {
      const defaults = resolveDefaultConfig(input.default_config, DEFAULT_BUILTIN_PERMISSION_POLICY);
      return {
        type: input.type,
        default_config: defaults,
        configs: (input.configs ?? []).map((c) => resolveToolConfig(c, defaults)),
      };
    }
    case "mcp_toolset": {
      const defaults = resolveDefaultConfig(input.default_config, DEFAULT_MCP_PERMISSION_POLICY);
      return {
        type: input.type,
        mcp_server_name: input.mcp_server_name,
        default_config: defaults,
        configs: (input.configs ?? []).map((c) => ({ name: c.name, ...resolveOverride(c, defaults) })),
      };
    }
    case "custom":
      return {
        type: "custom",
        name: input.name,
        description: input.description,
        input_schema: structuredClone(input.input_schema),
      };
  }
}

/**
 * `currentEffort` carries the stored effort into an update: the SDK documents that omitting `effort`
 * on update "leaves the stored value unchanged", while the rest of `model` is whole-object replacement
 * (an omitted `inference_geo` clears it). `null` resets to the model default (absent).
 */
export function resolveModel(input: ModelInput, currentEffort?: { type: EffortLevel }): ModelConfig {
  if (typeof input === "string") {
    return currentEffort ? { id: input, effort: { type: currentEffort.type } } : { id: input };
  }
  const out: ModelConfig = { id: input.id };
  if (input.effort === undefined) {
    if (currentEffort) out.effort = { type: currentEffort.type };
  } else if (input.effort !== null) {
    out.effort = { type: typeof input.effort === "string" ? input.effort : input.effort.type };
  }
  if (input.speed !== undefined && input.speed !== null) out.speed = input.speed;
  if (input.inference_geo !== undefined && input.inference_geo !== null)
    out.inference_geo = input.inference_geo;
  return out;
}

function resolveSkill(input: SkillInput): Skill {
  return { type: input.type, skill_id: input.skill_id, version: input.version ?? LATEST_SKILL_VERSION };
}

function resolveExecutionIdentity(input: ExecutionIdentityInput | null | undefined): Record<string, unknown> {
  if (!input || input.type === "service_account") return { type: "service_account" };
  return { type: "aws_role", role_arn: input.role_arn };
}

/** The stored form: only the fields of the server's type; a stdio server's args and env always present. */
function resolveMcpServer(input: McpServerInput): McpServer {
  if (input.type === "url") return { name: input.name, type: "url", url: input.url };
  const env: Record<string, StdioEnvValue> = {};
  for (const [name, value] of Object.entries(input.env ?? {})) {
    env[name] =
      typeof value === "string" ? value : { type: "vault_credential", secret_name: value.secret_name };
  }
  return { name: input.name, type: "stdio", command: input.command, args: [...(input.args ?? [])], env };
}

/** "" and null both clear description/system on update (wire §2.1). */
function clearable(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === "" ? null : value;
}

/** Resolves a create body into a stored definition, then validates it (throws `AwakenError`). */
export function resolveAgentCreate(input: AgentCreateInput): AgentDefinition {
  const definition: AgentDefinition = {
    name: input.name,
    description: input.description ?? null,
    system: input.system ?? null,
    model: resolveModel(input.model),
    tools: (input.tools ?? []).map(resolveTool),
    mcp_servers: (input.mcp_servers ?? []).map(resolveMcpServer),
    skills: (input.skills ?? []).map(resolveSkill),
    metadata: { ...(input.metadata ?? {}) },
    multiagent: input.multiagent ? structuredClone(input.multiagent) : null,
    execution_identity: resolveExecutionIdentity(input.execution_identity),
  };
  validateAgentDefinition(definition);
  return definition;
}

/**
 * Applies an update body to the current definition (wire §2.1): omitted fields keep their value;
 * `null`/`""` clears description and system; tools, mcp_servers, skills, multiagent and
 * execution_identity are full replacement (`null` clears to the empty/default value); metadata is a
 * patch (string upserts, null deletes; `metadata: null` changes nothing). Validates the result.
 * Whether anything changed (and so whether the version bumps) is for the caller to decide.
 */
export function applyAgentUpdate(current: AgentDefinition, input: AgentUpdateInput): AgentDefinition {
  const next: AgentDefinition = structuredClone(current);
  if (input.name !== undefined) next.name = input.name;
  if (input.description !== undefined) next.description = clearable(input.description);
  if (input.system !== undefined) next.system = clearable(input.system);
  if (input.model !== undefined) next.model = resolveModel(input.model, current.model.effort);
  if (input.tools !== undefined) next.tools = (input.tools ?? []).map(resolveTool);
  if (input.mcp_servers !== undefined) {
    next.mcp_servers = (input.mcp_servers ?? []).map(resolveMcpServer);
  }
  if (input.skills !== undefined) next.skills = (input.skills ?? []).map(resolveSkill);
  if (input.metadata !== undefined) next.metadata = applyMetadataPatch(current.metadata, input.metadata);
  if (input.multiagent !== undefined) {
    next.multiagent = input.multiagent === null ? null : structuredClone(input.multiagent);
  }
  if (input.execution_identity !== undefined) {
    next.execution_identity = resolveExecutionIdentity(input.execution_identity);
  }
  validateAgentDefinition(next);
  return next;
}

// ---------------------------------------------------------------------------------------------------
// Cross-field validation (what a per-field schema cannot see)
// ---------------------------------------------------------------------------------------------------

/**
 * How many tools a definition exposes, for the 256 cap. The built-in toolset counts as its 8 tools
 * (it exposes all of them whether or not they are overridden); an MCP toolset's real tool list is
 * only known once the server is connected, so it counts as its configured tools, and at least 1;
 * a custom tool counts as 1.
 */
export function countTools(tools: readonly AgentTool[]): number {
  let count = 0;
  for (const tool of tools) {
    if (tool.type === "agent_toolset_20260401") count += BUILTIN_TOOL_NAMES.length;
    else if (tool.type === "mcp_toolset") count += Math.max(1, tool.configs.length);
    else count += 1;
  }
  return count;
}

function fail(message: string): never {
  throw new AwakenError("invalid_request", message);
}

function firstDuplicate(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) return value;
    seen.add(value);
  }
  return undefined;
}

/**
 * Checks the rules that span fields. Throws `AwakenError("invalid_request")` (or `invalid_metadata`)
 * with a message that says what to change.
 */
export function validateAgentDefinition(def: AgentDefinition): void {
  if (isA2aModel(def.model.id)) {
    const problem = a2aModelProblem(def.model.id);
    if (problem !== null) fail(`model: ${problem}`);
  }
  // Only the id's grammar here: whether the runtime exists is the catalog's (acpRuntimes.ts).
  if (isAcpModel(def.model.id)) {
    const problem = acpModelProblem(def.model.id);
    if (problem !== null) fail(`model: ${problem}`);
  }
  const toolsets = def.tools.filter((t): t is AgentToolset => t.type === "agent_toolset_20260401");
  const mcpToolsets = def.tools.filter((t): t is McpToolset => t.type === "mcp_toolset");
  const customTools = def.tools.filter((t): t is CustomTool => t.type === "custom");

  if (toolsets.length > 1) {
    fail("tools: at most one agent_toolset_20260401 is allowed; merge the configs into a single toolset");
  }
  for (const toolset of toolsets) {
    const dup = firstDuplicate(toolset.configs.map((c) => c.name));
    if (dup !== undefined) {
      fail(`tools: agent_toolset_20260401 configures "${dup}" more than once; keep one config per tool`);
    }
  }

  const serverNames = def.mcp_servers.map((s) => s.name);
  const dupServer = firstDuplicate(serverNames);
  if (dupServer !== undefined) {
    fail(`mcp_servers: the name "${dupServer}" is used more than once; MCP server names must be unique`);
  }
  const known = new Set(serverNames);
  for (const toolset of mcpToolsets) {
    if (!known.has(toolset.mcp_server_name)) {
      fail(
        `tools: mcp_toolset references mcp_server_name "${toolset.mcp_server_name}", which is not in ` +
          `mcp_servers; add a server with that name or fix the reference`,
      );
    }
    const dup = firstDuplicate(toolset.configs.map((c) => c.name));
    if (dup !== undefined) {
      fail(`tools: mcp_toolset "${toolset.mcp_server_name}" configures "${dup}" more than once`);
    }
  }
  const referenced = mcpToolsets.map((t) => t.mcp_server_name);
  const dupReference = firstDuplicate(referenced);
  if (dupReference !== undefined) {
    fail(`tools: MCP server "${dupReference}" is referenced by more than one mcp_toolset; use exactly one`);
  }
  for (const name of serverNames) {
    if (!referenced.includes(name)) {
      fail(
        `mcp_servers: "${name}" is not referenced by any mcp_toolset; add ` +
          `{"type":"mcp_toolset","mcp_server_name":${JSON.stringify(name)}} to tools or remove the server`,
      );
    }
  }

  const customNames = customTools.map((t) => t.name);
  const dupCustom = firstDuplicate(customNames);
  if (dupCustom !== undefined) fail(`tools: custom tool name "${dupCustom}" is used more than once`);
  if (toolsets.length > 0) {
    const builtins: readonly string[] = BUILTIN_TOOL_NAMES;
    const clash = customNames.find((n) => builtins.includes(n));
    if (clash !== undefined) {
      fail(
        `tools: custom tool "${clash}" clashes with the built-in tool of agent_toolset_20260401; rename it`,
      );
    }
  }

  // web_fetch url_sources may name custom tools; they must exist in the same tools array (SDK docs).
  for (const toolset of toolsets) {
    for (const config of toolset.configs) {
      const filter = config.name === "web_fetch" ? config.url_sources?.client_tool_results : null;
      if (filter && (filter.type === "only" || filter.type === "except")) {
        const missing = filter.tools.find((t) => !customNames.includes(t.name));
        if (missing) {
          fail(
            `tools: web_fetch url_sources.client_tool_results names "${missing.name}", which is not a ` +
              `custom tool of this agent`,
          );
        }
      }
    }
  }

  const count = countTools(def.tools);
  if (count > MAX_TOOLS) {
    fail(
      `tools: at most ${MAX_TOOLS} tools are allowed across all toolsets (got ${count}; the built-in toolset ` +
        `counts as ${BUILTIN_TOOL_NAMES.length}, an mcp_toolset as its configured tools)`,
    );
  }

  assertValidMetadata(def.metadata);
}
