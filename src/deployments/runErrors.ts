import { AwakenError } from "../kernel/errors.js";
import type { RunError, RunErrorType } from "./ports.js";

/**
 * What a trigger that could not open its session records (SDK run `error`). The session entry's
 * refusals are client-facing already (they name ids, never a secret); anything else (a storage
 * fault, a bug) is an `unknown_error` with a fixed message, its detail left to the server's log.
 */
export function runErrorOf(error: unknown): RunError {
  if (!(error instanceof AwakenError)) {
    return { type: "unknown_error", message: "the session could not be created because of a server error" };
  }
  const message = error.message.slice(0, 1_000);
  return { type: classify(error.code, error.category, message), message };
}

function classify(code: string, category: string, message: string): RunErrorType {
  switch (code) {
    case "environment_not_found":
      return "environment_not_found_error";
    case "environment_archived":
      return "environment_archived_error";
    case "agent_archived":
      return "agent_archived_error";
    case "memory_store_archived":
      return "memory_store_archived_error";
    case "quota_exceeded":
    case "rate_limited":
      return "session_rate_limited_error";
  }
  // Refusals phrased by the services that own them (see agentService, vault ingress, resources).
  if (/\bagent \S+ is archived\b/.test(message)) return "agent_archived_error";
  if (/\bvault \S+ is archived\b/.test(message)) return "vault_archived_error";
  if (code === "not_found") {
    if (message.startsWith("vault ")) return "vault_not_found_error";
    if (message.startsWith("file ")) return "file_not_found_error";
    if (message.startsWith("skill")) return "skill_not_found_error";
    if (message.startsWith("memory store ")) return "session_resource_not_found_error";
    return "session_creation_rejected_error";
  }
  return category === "internal" || category === "unavailable"
    ? "unknown_error"
    : "session_creation_rejected_error";
}

/**
 * Run errors that pause a schedule (SDK paused reason errors): what will fail again on every fire.
 * A rate limit, a rejection, or an `unknown_error` (here a server fault, likely passing) does not.
 */
const PAUSING: ReadonlySet<RunErrorType> = new Set<RunErrorType>([
  "environment_archived_error",
  "agent_archived_error",
  "environment_not_found_error",
  "vault_not_found_error",
  "file_not_found_error",
  "session_resource_not_found_error",
  "workspace_archived_error",
  "organization_disabled_error",
  "memory_store_archived_error",
  "skill_not_found_error",
  "vault_archived_error",
  "self_hosted_resources_unsupported_error",
  "mcp_egress_blocked_error",
]);

export const pausesSchedule = (type: RunErrorType): boolean => PAUSING.has(type);
