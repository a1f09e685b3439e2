/**
 * The runtime permission gate: every built-in tool call passes it before anything runs, whatever
 * executes the tool (this server's sandbox or a self-hosted client). Pure: the decision depends
 * only on the pinned policy and the call, so it is the same on every worker and after a crash.
 */
import { posix } from "node:path";
import type { PermissionEffect, PermissionPolicy, PermissionRule } from "../control/agentDefinition.js";
import type { JsonObject } from "../kernel/json.js";

export interface GateDecision {
  permission: PermissionEffect;
  /** `agent.tool_use.evaluation` exactly as the wire describes it (§3.2). */
  evaluation: JsonObject;
  /** Why, in words a model (on deny) or an operator (in the log) can act on. */
  reason: string;
}

/** Relative paths are judged as the sandbox sees them: under its workspace. */
const WORKSPACE_ROOT = "/workspace";

export function evaluatePermission(
  policy: PermissionPolicy,
  toolName: string,
  input: JsonObject,
): GateDecision {
  if (policy.type === "always_allow") {
    return {
      permission: "allow",
      evaluation: { type: "always_allow" },
      reason: "the policy always allows it",
    };
  }
  if (policy.type === "always_ask") {
    return { permission: "ask", evaluation: { type: "always_ask" }, reason: "the policy always asks" };
  }
  const subject = subjectOf(toolName, input);
  const matching = (policy.rules ?? []).filter((rule) => matches(rule, subject));
  // deny wins over allow, which wins over ask: one matching deny is enough to refuse.
  for (const effect of ["deny", "allow", "ask"] as const) {
    const rule = matching.find((r) => r.effect === effect);
    if (!rule) continue;
    const what = rule.match === undefined ? `every ${toolName} call` : `${toolName} matching "${rule.match}"`;
    return {
      permission: effect,
      evaluation:
        effect === "allow"
          ? { type: "auto", evaluated_permission: { type: "allow" } }
          : { type: "auto", evaluated_permission: { type: effect, reason_code: "high_risk" } },
      reason: `the operator's rule ${effect}s ${what}`,
    };
  }
  // No rule speaks for this call: a human decides.
  return {
    permission: "ask",
    evaluation: { type: "auto", evaluated_permission: { type: "ask", reason_code: "indeterminate" } },
    reason: `no operator rule covers this ${toolName} call`,
  };
}

/** What the rules' `match` is applied to, per tool. */
export function subjectOf(toolName: string, input: JsonObject): string {
  const text = (key: string) => (typeof input[key] === "string" ? (input[key] as string) : "");
  switch (toolName) {
    case "bash":
      return text("command");
    case "read":
    case "write":
    case "edit":
      return normalizePath(text("file_path"));
    case "glob":
    case "grep":
      return input.path === undefined ? text("pattern") : normalizePath(text("path"));
    default:
      return JSON.stringify(input);
  }
}

/** `a/../../etc` must not pass a rule for `/workspace/*`: resolve before matching. */
function normalizePath(path: string): string {
  return posix.resolve(WORKSPACE_ROOT, path);
}

function matches(rule: PermissionRule, subject: string): boolean {
  return rule.match === undefined || globToRegExp(rule.match).test(subject);
}

function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const char of glob) {
    if (char === "*") source += "[\\s\\S]*";
    else if (char === "?") source += "[\\s\\S]";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}
