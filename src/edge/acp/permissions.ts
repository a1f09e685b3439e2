import type { PermissionOption, RequestPermissionResponse } from "@agentclientprotocol/sdk";

/** What the editor offers for a tool call the agent's permission policy asks about. */
export const PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

/** The user's decision; "cancelled" when the editor withdrew the question (its prompt was cancelled). */
export type PermissionDecision = "allow" | "deny" | "cancelled";

/** An editor's answer as a decision: only the allow option allows; anything else denies. */
export function decisionOf(response: RequestPermissionResponse): PermissionDecision {
  if (response.outcome.outcome === "cancelled") return "cancelled";
  return response.outcome.optionId === "allow" ? "allow" : "deny";
}
