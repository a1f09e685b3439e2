/**
 * The resolved content of one agent version, and the input shapes it is resolved from
 * (the rules live in `agentResolution.ts`).
 *
 * The wire (§2.1) accepts loose inputs (model as a string, effort as a bare level, toolsets with optional
 * defaults, web_fetch `url_sources` shorthands) and always answers with the resolved form. Resolution
 * happens once, at save time; stored versions and session snapshots only ever hold this form.
 *
 * Pure: no I/O, no zod. The edge parses request bodies into the `*Input` types below.
 */

// ---------------------------------------------------------------------------------------------------
// Shared vocabulary
// ---------------------------------------------------------------------------------------------------

export type PermissionPolicyType = "always_allow" | "always_ask" | "auto";
export interface PermissionPolicy {
  type: PermissionPolicyType;
  /**
   * Awaken extension, `auto` only: the operator's rules the runtime gate evaluates. Part of the
   * publication, so a session pins the rules of its agent version. Absent when there are none.
   */
  rules?: PermissionRule[];
}

export type PermissionEffect = "allow" | "ask" | "deny";
/**
 * `match` is a glob over the call's subject (bash: the command; read/write/edit: the file path,
 * normalized, relative paths under `/workspace`; glob/grep: the search path or pattern): `*` is
 * any run of characters (spaces and slashes included), `?` one character. No `match` = any call.
 */
export interface PermissionRule {
  effect: PermissionEffect;
  match?: string;
}
export const MAX_PERMISSION_RULES = 64;

export const EFFORT_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const;
export type EffortLevel = (typeof EFFORT_LEVELS)[number];

export const SIMPLE_BUILTIN_TOOL_NAMES = ["bash", "edit", "read", "write", "glob", "grep"] as const;
export type SimpleBuiltinToolName = (typeof SIMPLE_BUILTIN_TOOL_NAMES)[number];
/** The tools of `agent_toolset_20260401` (wire §2.1). */
export const BUILTIN_TOOL_NAMES = [...SIMPLE_BUILTIN_TOOL_NAMES, "web_fetch", "web_search"] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** Built-in tools run by the platform; a cloud environment evaluates them `allow` (wire §3.4.1). */
export const DEFAULT_BUILTIN_PERMISSION_POLICY: PermissionPolicy = { type: "always_allow" };
/** MCP tools have side effects on remote systems the operator may not own: a human confirms by default. */
export const DEFAULT_MCP_PERMISSION_POLICY: PermissionPolicy = { type: "always_ask" };
/** The SDK documents `enabled` as "Defaults to true if not specified". */
export const DEFAULT_TOOL_ENABLED = true;

/** Wire §2.1: "Maximum of 256 tools across all toolsets". See `countTools` for how toolsets count. */
export const MAX_TOOLS = 256;
/** Skill params pin a version optionally ("Defaults to latest if omitted"); the stored form needs a string. */
export const LATEST_SKILL_VERSION = "latest";

// ---------------------------------------------------------------------------------------------------
// Resolved (stored) shapes
// ---------------------------------------------------------------------------------------------------

export interface ToolDefaultConfig {
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

export type UrlSourceFilter =
  | { type: "all" }
  | { type: "none" }
  | { type: "only"; tools: Array<{ type: "tool_reference"; name: string }> }
  | { type: "except"; tools: Array<{ type: "tool_reference"; name: string }> };
export type UrlSourceUserInput = { type: "all" } | { type: "none" };

/** Responses always use the object form; a null key "was not set" and allows every URL from that source. */
export interface UrlSources {
  client_tool_results: UrlSourceFilter | null;
  server_tool_results: UrlSourceFilter | null;
  user_input: UrlSourceUserInput | null;
}

export interface UserLocation {
  type: "approximate";
  city?: string | null;
  country?: string | null;
  region?: string | null;
  timezone?: string | null;
}

export interface ToolConfigBase {
  enabled: boolean;
  permission_policy: PermissionPolicy;
}
export interface SimpleToolConfig extends ToolConfigBase {
  name: SimpleBuiltinToolName;
  type: SimpleBuiltinToolName;
}
export interface WebFetchToolConfig extends ToolConfigBase {
  name: "web_fetch";
  type: "web_fetch";
  url_sources: UrlSources | null;
  allowed_domains?: string[];
  blocked_domains?: string[];
  max_content_tokens?: number | null;
}
export interface WebSearchToolConfig extends ToolConfigBase {
  name: "web_search";
  type: "web_search";
  allowed_domains?: string[];
  blocked_domains?: string[];
  user_location?: UserLocation | null;
}
/** A resolved per-tool override inside `agent_toolset_20260401`. */
export type ToolConfig = SimpleToolConfig | WebFetchToolConfig | WebSearchToolConfig;

export interface McpToolConfig {
  name: string;
  enabled: boolean;
  permission_policy: PermissionPolicy;
}

export interface AgentToolset {
  type: "agent_toolset_20260401";
  default_config: ToolDefaultConfig;
  configs: ToolConfig[];
}
export interface McpToolset {
  type: "mcp_toolset";
  mcp_server_name: string;
  default_config: ToolDefaultConfig;
  configs: McpToolConfig[];
}
export interface CustomToolInputSchema {
  type: "object";
  properties?: Record<string, unknown> | null;
  required?: string[] | null;
  [key: string]: unknown;
}
export interface CustomTool {
  type: "custom";
  name: string;
  description: string;
  input_schema: CustomToolInputSchema;
}
export type AgentTool = AgentToolset | McpToolset | CustomTool;

export interface ModelConfig {
  id: string;
  effort?: { type: EffortLevel };
  speed?: "standard" | "fast";
  inference_geo?: string;
}

/** An MCP server reached over Streamable HTTP. */
export interface UrlMcpServer {
  name: string;
  type: "url";
  url: string;
}
/**
 * Awaken extension: an MCP server the session's sandbox runs, speaking MCP on its stdin/stdout.
 * `command` and `args` are an argv (never a shell line); `env` values are plain text or a
 * reference to a vault `environment_variable` credential, opened only when the process starts.
 */
export interface StdioMcpServer {
  name: string;
  type: "stdio";
  command: string;
  args: string[];
  env: Record<string, StdioEnvValue>;
}
/** A variable of a stdio server: text stored with the agent, or a pinned vault secret by its name. */
export type StdioEnvValue = string | VaultSecretReference;
export interface VaultSecretReference {
  type: "vault_credential";
  /** The `secret_name` of an `environment_variable` credential in one of the session's vaults. */
  secret_name: string;
}
export type McpServer = UrlMcpServer | StdioMcpServer;

/** The vault secrets a stdio server's environment names (none for a URL server). */
export function referencedSecretNames(server: McpServer): string[] {
  if (server.type !== "stdio") return [];
  return Object.values(server.env).flatMap((value) => (typeof value === "string" ? [] : [value.secret_name]));
}
export interface Skill {
  type: "anthropic" | "custom";
  skill_id: string;
  version: string;
}

export interface AgentDefinition {
  name: string;
  description: string | null;
  system: string | null;
  model: ModelConfig;
  tools: AgentTool[];
  mcp_servers: McpServer[];
  skills: Skill[];
  metadata: Record<string, string>;
  /** Stored and echoed as given; roster resolution (agent id → `{type, id, version}`) needs storage. */
  multiagent: Record<string, unknown> | null;
  /** The SDK documents it as always present: omitted/null resolves to `{type: "service_account"}`. */
  execution_identity: Record<string, unknown> | null;
}

// ---------------------------------------------------------------------------------------------------
// Inputs (what the edge hands over after parsing; `null` on an optional field means "use the default")
// ---------------------------------------------------------------------------------------------------

export interface ToolDefaultConfigInput {
  enabled?: boolean | null;
  permission_policy?: PermissionPolicy | null;
}
export type UrlSourceFilterInput = "all" | "none" | UrlSourceFilter;
export interface UrlSourcesInput {
  client_tool_results?: UrlSourceFilterInput | null;
  server_tool_results?: UrlSourceFilterInput | null;
  user_input?: "all" | "none" | UrlSourceUserInput | null;
}
export interface SimpleToolConfigInput extends ToolDefaultConfigInput {
  name: SimpleBuiltinToolName;
  type?: SimpleBuiltinToolName;
}
export interface WebFetchToolConfigInput extends ToolDefaultConfigInput {
  name: "web_fetch";
  type?: "web_fetch";
  allowed_domains?: string[];
  blocked_domains?: string[];
  max_content_tokens?: number | null;
  url_sources?: UrlSourcesInput | null;
}
export interface WebSearchToolConfigInput extends ToolDefaultConfigInput {
  name: "web_search";
  type?: "web_search";
  allowed_domains?: string[];
  blocked_domains?: string[];
  user_location?: UserLocation | null;
}
export type ToolConfigInput = SimpleToolConfigInput | WebFetchToolConfigInput | WebSearchToolConfigInput;

export interface AgentToolsetInput {
  type: "agent_toolset_20260401";
  default_config?: ToolDefaultConfigInput | null;
  configs?: ToolConfigInput[];
}
export interface McpToolConfigInput extends ToolDefaultConfigInput {
  name: string;
}
export interface McpToolsetInput {
  type: "mcp_toolset";
  mcp_server_name: string;
  default_config?: ToolDefaultConfigInput | null;
  configs?: McpToolConfigInput[];
}
export type AgentToolInput = AgentToolsetInput | McpToolsetInput | CustomTool;

export type ModelInput =
  | string
  | {
      id: string;
      effort?: EffortLevel | { type: EffortLevel } | null;
      speed?: "standard" | "fast" | null;
      inference_geo?: string | null;
    };
export interface SkillInput {
  type: "anthropic" | "custom";
  skill_id: string;
  version?: string | null;
}
export type ExecutionIdentityInput = { type: "service_account" } | { type: "aws_role"; role_arn: string };

/** `args` and `env` of a stdio server may be left out (none). */
export type McpServerInput =
  | UrlMcpServer
  | (Omit<StdioMcpServer, "args" | "env"> & {
      args?: string[] | null;
      env?: Record<string, StdioEnvValue> | null;
    });

export interface AgentCreateInput {
  name: string;
  model: ModelInput;
  description?: string | null;
  system?: string | null;
  tools?: AgentToolInput[];
  mcp_servers?: McpServerInput[];
  skills?: SkillInput[];
  metadata?: Record<string, string>;
  multiagent?: Record<string, unknown> | null;
  execution_identity?: ExecutionIdentityInput | null;
}

/** Omitted = keep. See `applyAgentUpdate` for what `null` means per field. */
export interface AgentUpdateInput {
  name?: string;
  model?: ModelInput;
  description?: string | null;
  system?: string | null;
  tools?: AgentToolInput[] | null;
  mcp_servers?: McpServerInput[] | null;
  skills?: SkillInput[] | null;
  metadata?: Record<string, string | null> | null;
  multiagent?: Record<string, unknown> | null;
  execution_identity?: ExecutionIdentityInput | null;
  /** Optimistic concurrency; checked by the service against the stored version, not here. */
  version?: number;
}
