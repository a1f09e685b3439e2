/**
 * The permission gate in front of a harness's own tools. A harness names its calls by ACP kind;
 * each kind is judged as the built-in tool that does the same thing (execute as bash, edit as
 * edit, …) under the agent's pinned policy for that tool, so an operator's rules read the same
 * whichever Brain runs. An agent without the built-in toolset has no policy to apply: every call
 * is asked. A kind whose tool the agent disabled is denied.
 */

import type { ToolCall as AcpToolCall, ToolCallUpdate, ToolKind } from "@agentclientprotocol/sdk";
import type { AgentDefinition } from "../../control/agentDefinition.js";
import type { JsonObject } from "../../kernel/json.js";
import { evaluatePermission, type GateDecision } from "../permissionGate.js";

const TOOL_OF_KIND: Partial<Record<ToolKind, string>> = {
  execute: "bash",
  read: "read",
  edit: "edit",
  delete: "write",
  move: "write",
  search: "grep",
  fetch: "web_fetch",
};

/** The name a harness call is recorded under: its built-in counterpart, else `harness_<kind>`. */
export function harnessToolName(kind: ToolKind | null | undefined): string {
  const k = kind ?? "other";
  return TOOL_OF_KIND[k] ?? `harness_${k.replace(/[^a-z_]/g, "_")}`;
}

/**
 * The call's input as recorded and judged: the harness's raw input when it is an object, with the
 * fields the built-in tool's rules match on filled from what the harness said (command, path).
 */
export function harnessToolInput(call: AcpToolCall | ToolCallUpdate): JsonObject {
  const raw = call.rawInput;
  const input: JsonObject =
    raw !== null && typeof raw === "object" && !Array.isArray(raw) ? { ...(raw as JsonObject) } : {};
  if (typeof call.title === "string" && input.title === undefined) input.title = call.title;
  const path = call.locations?.[0]?.path;
  if (typeof path === "string" && input.file_path === undefined) input.file_path = path;
  if (call.kind === "execute" && typeof input.command !== "string" && typeof call.title === "string")
    input.command = call.title;
  return input;
}

export function gateHarnessCall(agent: AgentDefinition, name: string, input: JsonObject): GateDecision {
  const toolset = agent.tools.find((t) => t.type === "agent_toolset_20260401");
  if (toolset?.type !== "agent_toolset_20260401") {
    return {
      permission: "ask",
      evaluation: { type: "always_ask" },
      reason: "the agent has no built-in toolset whose policy could judge the harness's tools",
    };
  }
  const builtin = name.startsWith("harness_") ? null : name;
  const config = (builtin && toolset.configs.find((c) => c.name === builtin)) || toolset.default_config;
  if (!config.enabled) {
    return {
      permission: "deny",
      evaluation: { type: "auto", evaluated_permission: { type: "deny", reason_code: "high_risk" } },
      reason: `the agent does not enable the ${name} tool`,
    };
  }
  return evaluatePermission(config.permission_policy, builtin ?? name, input);
}
