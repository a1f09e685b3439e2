import type { JsonObject, JsonValue } from "../../kernel/json.js";
import type { AfterAllow, AnswerKind, PendingAction } from "../facts.js";
import { object, text } from "./bodyValues.js";

/**
 * What a parked run waits for, as stored (a commit's or session's pending column): the Managed
 * wire's answer names, which committed rows keep. This is the one place that maps them to the
 * domain's; the stored key order is kept, so re-encoding a read value gives back the stored bytes.
 */

const STORED_KIND: Record<AnswerKind, string> = {
  client_tool_result: "custom_tool_result",
  server_tool_result: "tool_result",
  confirmation: "tool_confirmation",
  thread_answer: "thread_message",
};

const STORED_AFTER_ALLOW: Record<AfterAllow, string> = { server: "server", client: "tool_result" };

/** A stored answer kind; anything else reads as a built-in call's result (what the run can resume). */
export function decodeAnswerKind(stored: string): AnswerKind {
  if (stored === STORED_KIND.client_tool_result) return "client_tool_result";
  if (stored === STORED_KIND.confirmation) return "confirmation";
  if (stored === STORED_KIND.thread_answer) return "thread_answer";
  return "server_tool_result";
}

export function encodeAnswerKind(kind: AnswerKind): string {
  return STORED_KIND[kind];
}

/** A stored `after_allow`: the client when it owes the result, else this server. */
export function decodeAfterAllow(stored: JsonValue | undefined): AfterAllow {
  return stored === STORED_AFTER_ALLOW.client ? "client" : "server";
}

export function encodeAfterAllow(afterAllow: AfterAllow): string {
  return STORED_AFTER_ALLOW[afterAllow];
}

export function decodePending(value: JsonValue | undefined): PendingAction[] {
  if (!Array.isArray(value)) return [];
  return value.map((entry) => {
    const stored = object(entry);
    const action: PendingAction = {
      eventId: text(stored.eventId),
      kind: decodeAnswerKind(text(stored.kind)),
    };
    if (stored.afterAllow !== undefined) action.afterAllow = decodeAfterAllow(stored.afterAllow);
    if (stored.mcp === true) action.mcp = true;
    if (stored.harness === true) action.harness = true;
    return action;
  });
}

export function encodePending(pending: readonly PendingAction[]): JsonObject[] {
  return pending.map((action) => {
    const stored: JsonObject = { eventId: action.eventId, kind: encodeAnswerKind(action.kind) };
    if (action.afterAllow !== undefined) stored.afterAllow = encodeAfterAllow(action.afterAllow);
    if (action.mcp) stored.mcp = true;
    if (action.harness) stored.harness = true;
    return stored;
  });
}
