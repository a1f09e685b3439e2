import type { Interrupt } from "@ag-ui/core";
import type { IdleReason, ToolCall } from "../../coordinator/factVocabulary.js";
import { interruptIdFor } from "./interruptIds.js";

/** How one AG-UI run ends: RUN_FINISHED with one of the protocol's outcomes, or RUN_ERROR. */
export type RunEnd =
  | { kind: "success"; pendingToolCallIds: string[] }
  | { kind: "interrupt"; interrupts: Interrupt[] }
  | { kind: "cancelled" }
  | { kind: "error"; code: string; message: string };

/** What a turn showed before it went idle, as far as its ending depends on it. */
export interface TurnObservations {
  calls: ReadonlyMap<string, ToolCall>;
  /** Calls whose confirmation was answered (an allowed self-hosted call then waits for its worker). */
  confirmed: ReadonlySet<string>;
  interrupted: boolean;
  lastError: { type: string; message: string } | null;
}

const INPUT_PREVIEW_MAX = 500;

/**
 * The run's end for the idle that closes its turn. A turn waiting on the client's own tools
 * finishes successfully naming them; a turn waiting on approvals finishes as an interrupt, one
 * per call, under an id derived from the call (see `interruptIds.ts`).
 */
export function runEndOfIdle(reason: IdleReason, seen: TurnObservations): RunEnd {
  switch (reason.kind) {
    case "turn_ended":
      return seen.interrupted ? { kind: "cancelled" } : { kind: "success", pendingToolCallIds: [] };
    case "waiting":
      return waitingEnd(reason.callIds, seen);
    case "retries_exhausted":
      return {
        kind: "error",
        code: seen.lastError?.type ?? "retries_exhausted",
        message: seen.lastError?.message ?? "The turn failed and its retries are exhausted.",
      };
    case "budget_reached":
      return {
        kind: "error",
        code: "budget_reached",
        message: "The session's list cost reached its budget: raise the budget to continue.",
      };
    default:
      return { kind: "success", pendingToolCallIds: [] };
  }
}

function waitingEnd(callIds: readonly string[], seen: TurnObservations): RunEnd {
  const interrupts: Interrupt[] = [];
  const pendingToolCallIds: string[] = [];
  for (const id of callIds) {
    const call = seen.calls.get(id);
    if (!call) continue;
    if (call.executor === "client") pendingToolCallIds.push(id);
    else if (call.permission?.decision === "ask" && !seen.confirmed.has(id)) {
      interrupts.push({
        id: interruptIdFor(id),
        reason: "tool_approval",
        toolCallId: id,
        message: `The agent asks to run ${call.name} with ${inputPreview(call.input)}. Allow it?`,
      });
    }
    // Otherwise an allowed call of a self-hosted environment waits for its worker, not this client.
  }
  if (interrupts.length > 0) return { kind: "interrupt", interrupts };
  return { kind: "success", pendingToolCallIds };
}

function inputPreview(input: unknown): string {
  const json = JSON.stringify(input);
  return json.length > INPUT_PREVIEW_MAX ? `${json.slice(0, INPUT_PREVIEW_MAX)}…` : json;
}
