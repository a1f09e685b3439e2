/**
 * What the server counts for operators, as a narrow port: runtime, worker and edge report through
 * it and never see the metrics library. Every label value handed in must already be bounded (a
 * route pattern, a built-in tool name, an outcome); no session, workspace or user id, no free text.
 */

export type ModelRequestOutcome = "ok" | "error" | "aborted";
export type ToolCallOutcome = "ok" | "error" | "indeterminate" | "delegated";
export type CommitOutcome = "ok" | "lost_claim" | "version_conflict";
export type RunSettleOutcome = "done" | "awaiting" | "failed";
/** Why the fence refused a commit (the kinds of `CommitRejection`). */
export type FenceRejectionReason = "stale_claim" | "version_conflict" | "operation_conflict";
/** Which side of the worker transport claimed: an in-process worker or a remote one. */
export type ClaimVia = "local" | "remote";
export type SandboxRealizeOutcome = "ok" | "error";
/** The credential open audit's outcomes. */
export type CredentialOpenOutcome = "opened" | "refreshed" | "refused";
/** One push-notification attempt: delivered, failed and retried later, given up, or refused by the address policy. */
export type PushDeliveryOutcome = "delivered" | "retried" | "abandoned" | "refused";

export interface ModelTokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

export interface Metrics {
  /**
   * One model request; `tokens` only when it answered. `model` is the id the agent names (free
   * text): the exposition keeps published ids by name and counts every other as "other".
   */
  modelRequest(
    provider: string,
    model: string,
    outcome: ModelRequestOutcome,
    seconds: number,
    tokens?: ModelTokens,
  ): void;
  /** `tool` is a built-in tool's name, `mcp` or `custom`; `seconds` only for calls the server ran. */
  toolCall(tool: string, outcome: ToolCallOutcome, seconds?: number): void;
  commit(outcome: CommitOutcome): void;
  /** A commit the fence refused, by the rejection's kind (counted besides `commit`). */
  fenceRejected(reason: FenceRejectionReason): void;
  /** A run claimed; `waitSeconds` is how long it had been claimable, when the claim says. */
  runClaimed(via: ClaimVia, reclaimed: boolean, waitSeconds?: number): void;
  /** A run failed because its worker crashed more often than the crash budget allows. */
  crashBudgetExhausted(): void;
  /**
   * A session's sandbox realized for the first time (`seconds`: until its first tool could run),
   * or a realization that failed.
   */
  sandboxRealized(tier: string, outcome: SandboxRealizeOutcome, seconds?: number): void;
  /** One audited credential open; `holder` is a holder kind (`mcp_connection`), never an id. */
  credentialOpen(holder: string, outcome: CredentialOpenOutcome): void;
  runSettled(outcome: RunSettleOutcome): void;
  /** One push-notification delivery attempt. */
  pushDelivery(outcome: PushDeliveryOutcome): void;
  /** `route` is the matched route pattern (`/v1/sessions/:id`), never the raw URL. */
  httpRequest(route: string, method: string, status: number, seconds: number): void;
  /** An event stream opened; the returned function closes it (once). */
  streamOpened(): () => void;
}

/** What `GET /metrics` answers: the exposition text and its content type. */
export interface MetricsExposition {
  contentType: string;
  render(): Promise<string>;
}

/** Counts nothing: tests and remote workers built without metrics. */
export const noopMetrics: Metrics = {
  modelRequest: () => {},
  toolCall: () => {},
  commit: () => {},
  fenceRejected: () => {},
  runClaimed: () => {},
  crashBudgetExhausted: () => {},
  sandboxRealized: () => {},
  credentialOpen: () => {},
  runSettled: () => {},
  pushDelivery: () => {},
  httpRequest: () => {},
  streamOpened: () => () => {},
};

/** Seconds since `startMs` (a `performance.now()` reading). */
export function secondsSince(startMs: number): number {
  return (performance.now() - startMs) / 1000;
}
