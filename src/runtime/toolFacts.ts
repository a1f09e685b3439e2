import type { Fact } from "../coordinator/facts.js";
import { newId } from "../kernel/ids.js";
import type { JsonObject } from "../kernel/json.js";

/**
 * Committed right before a Hand tool runs: the call's intent. A call found with this fact and no
 * result was interrupted mid-run (the worker died), and is re-run only if the tool is repeatable.
 * Internal: no protocol projects it.
 */
export const TOOL_EXECUTION = "awaken.tool_execution";

export function toolExecution(now: number, toolUseId: string, attempt: number): Fact {
  return { id: newId("sevt", now), type: TOOL_EXECUTION, body: { tool_use_id: toolUseId, attempt } };
}

export function toolResult(now: number, toolUseId: string, text: string, isError: boolean): Fact {
  return {
    id: newId("sevt", now),
    type: "agent.tool_result",
    body: { tool_use_id: toolUseId, content: [{ type: "text", text }], is_error: isError },
  };
}

/** The result of an MCP call (wire §3.2: `agent.mcp_tool_result`), content as the server gave it. */
export function mcpToolResult(
  now: number,
  mcpToolUseId: string,
  content: JsonObject[],
  isError: boolean,
): Fact {
  return {
    id: newId("sevt", now),
    type: "agent.mcp_tool_result",
    body: { mcp_tool_use_id: mcpToolUseId, content, is_error: isError },
  };
}

/** What the model is told when a call that is not safe to repeat was cut off by a crash. */
export function indeterminateText(name: string): string {
  return (
    `The ${name} call was interrupted: the worker running it stopped before it reported a result. ` +
    `It is not safe to repeat, so it was not run again, and whether it took effect is unknown. ` +
    `Check its effects before running it again.`
  );
}

/**
 * The session's sandbox was realized for the first time: which tier, under which provisioning, and
 * how long it took. Internal; one per session. Sandbox start-up latency, apart from the tools' own.
 */
export const SANDBOX_REALIZED = "awaken.sandbox_realized";

export function sandboxRealized(now: number, tier: string, provisioning: string, realizeMs: number): Fact {
  return {
    id: newId("sevt", now),
    type: SANDBOX_REALIZED,
    body: { tier, provisioning, realize_ms: realizeMs },
  };
}
