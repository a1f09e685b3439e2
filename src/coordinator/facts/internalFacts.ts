import type { JsonObject } from "../../kernel/json.js";
import type { AfterAllow, AnswerKind } from "../facts.js";
import type { TypedFact } from "../factVocabulary.js";
import { count, object, text } from "./bodyValues.js";
import { decodeAfterAllow, decodeAnswerKind, encodeAfterAllow, encodeAnswerKind } from "./pendingCodec.js";

/**
 * Committed with a built-in tool use that waits for a client (a confirmation, or a result from a
 * self-hosted worker). With the run's awaiting settle it forms the resume ticket: which calls wait
 * for which answer, under the run's pinned snapshot.
 */
export const TOOL_AWAITS = "awaken.tool_awaits";

/**
 * Committed right before a Hand or MCP tool runs: the call's intent. A call found with this fact and
 * no result was interrupted mid-run (the worker died), and is re-run only if the tool is repeatable.
 */
export const TOOL_EXECUTION = "awaken.tool_execution";

export interface ToolAwaits {
  callId: string;
  answer: Exclude<AnswerKind, "client_tool_result">;
  /** For a confirmation: who runs the call once allowed (this server, or the client's worker). */
  afterAllow: AfterAllow;
  /** The call is an MCP call: its denial is an MCP result. */
  mcp: boolean;
  /** The call is an ACP harness's own: its denial is a harness result, answered to the harness. */
  harness: boolean;
}

export function toolAwaitsFact(
  id: string,
  callId: string,
  answer: ToolAwaits["answer"],
  afterAllow?: ToolAwaits["afterAllow"],
  mcp = false,
  harness = false,
): TypedFact {
  const stored = encodeAnswerKind(answer);
  const body: JsonObject = afterAllow
    ? { tool_use_id: callId, answer: stored, after_allow: encodeAfterAllow(afterAllow) }
    : { tool_use_id: callId, answer: stored };
  if (mcp) body.mcp = true;
  if (harness) body.harness = true;
  return { id, kind: "internal", type: TOOL_AWAITS, body };
}

export function readToolAwaits(f: TypedFact): ToolAwaits | null {
  if (f.kind !== "internal" || f.type !== TOOL_AWAITS) return null;
  const body = object(f.body);
  return {
    callId: text(body.tool_use_id),
    answer: decodeAnswerKind(text(body.answer)) === "confirmation" ? "confirmation" : "server_tool_result",
    afterAllow: decodeAfterAllow(body.after_allow),
    mcp: body.mcp === true,
    harness: body.harness === true,
  };
}

export function toolExecutionFact(id: string, callId: string, attempt: number): TypedFact {
  return { id, kind: "internal", type: TOOL_EXECUTION, body: { tool_use_id: callId, attempt } };
}

export function readToolExecution(f: TypedFact): { callId: string; attempt: number } | null {
  if (f.kind !== "internal" || f.type !== TOOL_EXECUTION) return null;
  return { callId: text(f.body.tool_use_id), attempt: count(f.body.attempt) };
}
