/** Wire events as the server commits them, built for the Console's projection tests. */
import type { SessionEvent } from "../../src/console/api/wire.js";

let serial = 0;
const at = () => new Date(Date.UTC(2026, 0, 1, 0, 0, serial)).toISOString();
const id = (prefix: string) => `${prefix}_${++serial}`;

export const ev = {
  user: (text: string): SessionEvent => ({
    id: id("sevt"),
    type: "user.message",
    content: [{ type: "text", text }],
    processed_at: at(),
  }),
  agent: (text: string, eventId = id("sevt")): SessionEvent => ({
    id: eventId,
    type: "agent.message",
    content: [{ type: "text", text }],
    processed_at: at(),
  }),
  running: (): SessionEvent => ({ id: id("sevt"), type: "session.status_running", processed_at: at() }),
  idle: (stop: "end_turn" | "retries_exhausted" | { waitingFor: string[] }): SessionEvent => ({
    id: id("sevt"),
    type: "session.status_idle",
    stop_reason:
      typeof stop === "string" ? { type: stop } : { type: "requires_action", event_ids: stop.waitingFor },
    stop_details: null,
    processed_at: at(),
  }),
  toolUse: (name: string, input: Record<string, unknown>, permission?: "allow" | "ask"): SessionEvent => ({
    id: id("sevt"),
    type: "agent.tool_use",
    name,
    input,
    ...(permission ? { evaluated_permission: permission } : {}),
    processed_at: at(),
  }),
  mcpToolUse: (server: string, name: string): SessionEvent => ({
    id: id("sevt"),
    type: "agent.mcp_tool_use",
    mcp_server_name: server,
    name,
    input: {},
    evaluated_permission: "allow",
    processed_at: at(),
  }),
  mcpResult: (callId: string, text: string): SessionEvent => ({
    id: id("sevt"),
    type: "agent.mcp_tool_result",
    mcp_tool_use_id: callId,
    content: [{ type: "text", text }],
    is_error: false,
    processed_at: at(),
  }),
  customToolUse: (name: string): SessionEvent => ({
    id: id("sevt"),
    type: "agent.custom_tool_use",
    name,
    input: {},
    processed_at: at(),
  }),
  toolResult: (callId: string, text: string, isError = false): SessionEvent => ({
    id: id("sevt"),
    type: "agent.tool_result",
    tool_use_id: callId,
    content: [{ type: "text", text }],
    is_error: isError,
    processed_at: at(),
  }),
  confirm: (callId: string, result: "allow" | "deny", denyMessage?: string): SessionEvent => ({
    id: id("sevt"),
    type: "user.tool_confirmation",
    tool_use_id: callId,
    result,
    ...(denyMessage ? { deny_message: denyMessage } : {}),
    processed_at: at(),
  }),
  modelStart: (): SessionEvent =>
    ({
      id: id("sevt"),
      type: "span.model_request_start",
      provider: "anthropic",
      model: "claude-sonnet-4-6",
      processed_at: at(),
    }) as SessionEvent,
  modelEnd: (startId: string, isError = false): SessionEvent => ({
    id: id("sevt"),
    type: "span.model_request_end",
    model_request_start_id: startId,
    is_error: isError,
    model_usage: {
      input_tokens: 12,
      output_tokens: 34,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
    processed_at: at(),
  }),
  error: (message: string, retry: "retrying" | "exhausted" = "exhausted"): SessionEvent => ({
    id: id("sevt"),
    type: "session.error",
    error: { type: "model_request_failed_error", message, retry_status: { type: retry } },
    processed_at: at(),
  }),
  interrupt: (): SessionEvent => ({ id: id("sevt"), type: "user.interrupt", processed_at: at() }),
  terminated: (): SessionEvent => ({ id: id("sevt"), type: "session.status_terminated", processed_at: at() }),
};
