import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolCall } from "../../coordinator/factVocabulary.js";
import type { CallView } from "./turnObserver.js";

const INPUT_PREVIEW_MAX = 500;

/** What one agent tool call answers, before it becomes a CallToolResult. */
export type CallOutcome =
  | {
      kind: "ended";
      sessionId: string;
      stopReason: string;
      text: string;
      error: string | null;
      calls: readonly CallView[];
    }
  | {
      kind: "pending";
      sessionId: string;
      approvals: readonly ToolCall[];
      clientCalls: readonly ToolCall[];
      calls: readonly CallView[];
    }
  | { kind: "refused"; message: string; sessionId?: string };

export function callResultOf(outcome: CallOutcome): CallToolResult {
  switch (outcome.kind) {
    case "ended":
      return {
        content: textContent(outcome.error ?? outcome.text),
        structuredContent: {
          session_id: outcome.sessionId,
          stop_reason: outcome.stopReason,
          tool_calls: outcome.calls.map(callOf),
        },
        ...(outcome.error !== null ? { isError: true } : {}),
      };
    case "pending":
      return {
        content: textContent(pendingText(outcome)),
        structuredContent: {
          session_id: outcome.sessionId,
          stop_reason: "requires_action",
          tool_calls: outcome.calls.map(callOf),
          pending: [
            ...outcome.approvals.map((c) => pendingOf(c, "tool_confirmation")),
            ...outcome.clientCalls.map((c) => pendingOf(c, "tool_result")),
          ],
        },
      };
    case "refused":
      return { content: textContent(outcome.message), isError: true };
  }
}

function textContent(text: string): CallToolResult["content"] {
  return text === "" ? [] : [{ type: "text", text }];
}

function callOf(call: CallView) {
  return { id: call.id, name: call.name, state: call.state };
}

function pendingOf(call: ToolCall, kind: "tool_confirmation" | "tool_result") {
  return { call_id: call.id, kind, tool: call.name, input: call.input };
}

/** Worded for the model and the user alike: what waits, and how it can be answered. */
function pendingText(outcome: Extract<CallOutcome, { kind: "pending" }>): string {
  const lines: string[] = [];
  for (const call of outcome.approvals) {
    lines.push(
      `Approval pending: the agent asks to run ${call.name} with ${inputPreview(call.input)} (call ${call.id}).`,
    );
  }
  for (const call of outcome.clientCalls) {
    lines.push(
      `Client tool result pending: the agent called its custom tool ${call.name} (call ${call.id}).`,
    );
  }
  const how =
    outcome.approvals.length > 0
      ? "Answer the approval with a user.tool_confirmation event (allow or deny) on the Managed Agents API"
      : "Answer it with a user.custom_tool_result event on the Managed Agents API";
  lines.push(
    `Session ${outcome.sessionId} waits for it and takes no new message until then. ` +
      `${how} (POST /v1/sessions/${outcome.sessionId}/events); the turn then goes on in that session.`,
  );
  return lines.join("\n");
}

export function inputPreview(input: unknown): string {
  const json = JSON.stringify(input);
  return json.length > INPUT_PREVIEW_MAX ? `${json.slice(0, INPUT_PREVIEW_MAX)}…` : json;
}
