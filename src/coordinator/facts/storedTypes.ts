import type { FactKind } from "../factVocabulary.js";

/**
 * The stored `type` of each fact kind. The stored encoding predates the vocabulary and matches the
 * Managed Agents wire; it is private to the codec (stores use `storedTypesOf` to filter rows).
 * Tool calls and results map to several types, chosen by executor (see `toolCodec.ts`).
 */
export const STORED_TYPE = {
  user_message: "user.message",
  system_message: "system.message",
  agent_message: "agent.message",
  agent_thinking: "agent.thinking",
  interrupt: "user.interrupt",
  tool_confirmation: "user.tool_confirmation",
  status_running: "session.status_running",
  status_idle: "session.status_idle",
  status_rescheduled: "session.status_rescheduled",
  status_terminated: "session.status_terminated",
  error: "session.error",
  usage: "session.usage",
  model_request_start: "span.model_request_start",
  model_request_end: "span.model_request_end",
  context_compacted: "agent.thread_context_compacted",
  session_updated: "session.updated",
  session_deleted: "session.deleted",
  thread_created: "session.thread_created",
  thread_message_sent: "agent.thread_message_sent",
  thread_message_received: "agent.thread_message_received",
  outcome_defined: "user.define_outcome",
  outcome_evaluation_start: "span.outcome_evaluation_start",
  outcome_evaluation_ongoing: "span.outcome_evaluation_ongoing",
  outcome_evaluation_end: "span.outcome_evaluation_end",
} as const satisfies Partial<Record<FactKind, string>>;

/** A thread's status change is stored under one type per state it reached (see `threadCodec.ts`). */
export const THREAD_STATUS_TYPE = {
  running: "session.thread_status_running",
  idle: "session.thread_status_idle",
  rescheduled: "session.thread_status_rescheduled",
  terminated: "session.thread_status_terminated",
} as const;

export const TOOL_CALL_TYPE = {
  server: "agent.tool_use",
  client: "agent.custom_tool_use",
  mcp: "agent.mcp_tool_use",
} as const;

export const TOOL_RESULT_TYPE = {
  clientCallByClient: "user.custom_tool_result",
  serverCallByClient: "user.tool_result",
  serverCallByServer: "agent.tool_result",
  mcpCallByServer: "agent.mcp_tool_result",
} as const;

/** Internal facts (runtime bookkeeping no protocol shows) are stored under this prefix. */
export const INTERNAL_PREFIX = "awaken.";
