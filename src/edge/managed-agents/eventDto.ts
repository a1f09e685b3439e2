import { encodeFact } from "../../coordinator/factCodec.js";
import type {
  CommittedTypedFact,
  IdleReason,
  ThreadTransition,
  ToolCall,
  TypedFact,
} from "../../coordinator/factVocabulary.js";
import { isoTime } from "../../kernel/clock.js";
import type { JsonObject } from "../../kernel/json.js";
import { monetaryAmount } from "../../kernel/listPrices.js";
import { usageDto } from "./usageDto.js";

/**
 * Committed facts → Managed Agents session events (wire §3.2), type by type: `{ id, type, ...fields,
 * processed_at }`. Field order follows the order the fields have always been shown in.
 */
export function eventDto(f: CommittedTypedFact): Record<string, unknown> {
  const [type, fields] = wireEvent(f);
  // A span committed with its answer was processed when its request started.
  const at = f.kind === "model_request_start" && f.startedAt !== undefined ? f.startedAt : f.createdAt;
  return { id: f.id, type, ...fields, processed_at: isoTime(at) };
}

function wireEvent(f: TypedFact): [string, Record<string, unknown>] {
  switch (f.kind) {
    case "user_message":
      // `clientMessageId` and `clientMetadata` are the product's own bookkeeping for UI clients: this
      // wire has no field for them.
      return ["user.message", { content: f.content }];
    case "system_message":
      return ["system.message", { content: f.content }];
    case "agent_message":
      return ["agent.message", { content: f.content }];
    case "agent_thinking":
      return ["agent.thinking", {}];
    case "tool_call":
      return toolUse(f.call);
    case "thread_ask": {
      // A subagent's call cross-posted on the primary stream, named by the thread it waits in.
      const [type, fields] = toolUse(f.call);
      return [type, { ...fields, session_thread_id: f.thread }];
    }
    case "tool_result": {
      const [type, callField] = resultWire(f.executor, f.by);
      const unset = new Set(f.unset ?? []);
      return [
        type,
        {
          [callField]: f.callId,
          ...(unset.has("content") ? {} : { content: f.content }),
          ...(unset.has("isError") ? {} : { is_error: f.isError }),
          ...routedTo(f.thread),
        },
      ];
    }
    case "tool_confirmation":
      return [
        "user.tool_confirmation",
        {
          tool_use_id: f.callId,
          result: f.allowed ? "allow" : "deny",
          ...(f.denyMessage !== null ? { deny_message: f.denyMessage } : {}),
          ...routedTo(f.thread),
        },
      ];
    case "interrupt":
      return ["user.interrupt", f.targetThread !== undefined ? { session_thread_id: f.targetThread } : {}];
    case "status_running":
      return ["session.status_running", {}];
    case "status_idle":
      return ["session.status_idle", { stop_reason: stopReason(f.reason), stop_details: null }];
    case "status_rescheduled":
      return ["session.status_rescheduled", {}];
    case "status_terminated":
      return ["session.status_terminated", {}];
    case "error":
      return [
        "session.error",
        {
          error: { type: f.errorType, message: f.message, retry_status: { type: f.retryStatus }, ...f.extra },
        },
      ];
    case "usage":
      return [
        "session.usage",
        {
          usage: {
            ...usageDto(f.usage),
            ...(f.activeSeconds !== undefined ? { active_seconds: f.activeSeconds } : {}),
            ...(f.listCostCents !== undefined ? { list_cost: monetaryAmount(BigInt(f.listCostCents)) } : {}),
          },
          ...(f.budget !== undefined ? { budget: f.budget } : {}),
        },
      ];
    case "model_request_start":
      return ["span.model_request_start", { provider: f.provider, model: f.model }];
    case "model_request_end":
      return [
        "span.model_request_end",
        {
          model_request_start_id: f.startId,
          is_error: f.isError,
          provider: f.provider,
          model: f.model,
          model_usage: {
            input_tokens: f.usage.inputTokens,
            output_tokens: f.usage.outputTokens,
            cache_creation_input_tokens: f.usage.cacheCreationInputTokens,
            cache_read_input_tokens: f.usage.cacheReadInputTokens,
          },
        },
      ];
    case "context_compacted":
      // The summary and its boundary are the runtime's to rebuild the model's view: the wire
      // says only that compaction happened, and when.
      return ["agent.thread_context_compacted", {}];
    case "session_updated":
      return ["session.updated", f.changes];
    case "session_deleted":
      return ["session.deleted", {}];
    case "thread_created":
      return [
        "session.thread_created",
        { session_thread_id: f.thread, agent_name: f.agentName, workflow_run_id: f.workflowRun },
      ];
    case "thread_status":
      return threadStatus(f.thread, f.agentName, f.transition);
    case "thread_message_sent":
      return [
        "agent.thread_message_sent",
        {
          content: f.content,
          to_session_thread_id: f.toThread,
          // The SDK: absent when the message went to the primary agent.
          ...(f.toAgentName !== null ? { to_agent_name: f.toAgentName } : {}),
        },
      ];
    case "thread_message_received":
      return [
        "agent.thread_message_received",
        {
          content: f.content,
          from_session_thread_id: f.fromThread,
          ...(f.fromAgentName !== null ? { from_agent_name: f.fromAgentName } : {}),
        },
      ];
    case "outcome_defined":
      // A file rubric is shown as the text it was resolved to on acceptance (as the SDK describes).
      return [
        "user.define_outcome",
        {
          outcome_id: f.outcomeId,
          description: f.description,
          rubric: { type: "text", content: f.rubric.content },
          max_iterations: f.maxIterations,
        },
      ];
    case "outcome_evaluation_start":
      return ["span.outcome_evaluation_start", { outcome_id: f.outcomeId, iteration: f.iteration }];
    case "outcome_evaluation_ongoing":
      return ["span.outcome_evaluation_ongoing", { outcome_id: f.outcomeId, iteration: f.iteration }];
    case "outcome_evaluation_end":
      return [
        "span.outcome_evaluation_end",
        {
          outcome_id: f.outcomeId,
          outcome_evaluation_start_id: f.startId,
          iteration: f.iteration,
          result: f.result,
          explanation: f.explanation,
          usage: {
            input_tokens: f.usage.inputTokens,
            output_tokens: f.usage.outputTokens,
            cache_creation_input_tokens: f.usage.cacheCreationInputTokens,
            cache_read_input_tokens: f.usage.cacheReadInputTokens,
          },
        },
      ];
    case "workflow_run": {
      // Stored under the wire's type with the wire's fields.
      const { type, body } = encodeFact(f);
      return [type, body];
    }
    case "internal":
    case "unknown":
      // Nothing projects internal facts (readers skip them); an unknown type is shown as stored.
      return [f.type, f.body];
  }
}

/** The SDK: set to the subagent thread an answer was routed to, omitted for the primary. */
const routedTo = (thread: string | undefined) => (thread !== undefined ? { session_thread_id: thread } : {});

function threadStatus(
  thread: string,
  agentName: string,
  transition: ThreadTransition,
): [string, Record<string, unknown>] {
  const fields = { session_thread_id: thread, agent_name: agentName };
  if (transition.to !== "idle") return [`session.thread_status_${transition.to}`, fields];
  return [
    "session.thread_status_idle",
    { ...fields, stop_reason: stopReason(transition.reason), stop_details: null },
  ];
}

function toolUse(call: ToolCall): [string, Record<string, unknown>] {
  const verdict = call.permission
    ? { evaluated_permission: call.permission.decision, evaluation: call.permission.evaluation }
    : {};
  switch (call.executor) {
    case "client":
      return ["agent.custom_tool_use", { name: call.name, input: call.input }];
    case "server":
      return ["agent.tool_use", { name: call.name, input: call.input, ...verdict }];
    case "harness":
      // The ACP harness's own tool, shown as a built-in tool use; the extension field tells them apart.
      return ["agent.tool_use", { name: call.name, input: call.input, ...verdict, awaken_harness: true }];
    case "mcp":
      return [
        "agent.mcp_tool_use",
        { name: call.name, mcp_server_name: call.mcpServer, input: call.input, ...verdict },
      ];
  }
}

function resultWire(executor: ToolCall["executor"], by: "server" | "client"): [string, string] {
  if (executor === "client") return ["user.custom_tool_result", "custom_tool_use_id"];
  if (executor === "mcp") return ["agent.mcp_tool_result", "mcp_tool_use_id"];
  return by === "client" ? ["user.tool_result", "tool_use_id"] : ["agent.tool_result", "tool_use_id"];
}

function stopReason(reason: IdleReason): JsonObject {
  switch (reason.kind) {
    case "turn_ended":
      return { type: "end_turn" };
    case "waiting":
      return { type: "requires_action", event_ids: reason.callIds };
    case "other":
      return { type: reason.type };
    default:
      return { type: reason.kind };
  }
}
