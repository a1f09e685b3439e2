/**
 * Committed session events → the transcript's rows, a pure projection. A tool call is one row that
 * gathers its confirmation and result (matched by id, as the wire matches them); a model request is
 * one row from its start and end spans. Everything else is one row per event.
 */
import type { HarnessToolFields, ModelRequestFields, SessionEvent } from "../api/wire.js";
import { contentText } from "./contentText.js";
import { verdictWords } from "./outcomes.js";

export type ToolExecutor = "server" | "mcp" | "client";

export interface ToolRow {
  kind: "tool";
  id: string;
  at: string | null;
  name: string;
  executor: ToolExecutor;
  mcpServer: string | null;
  /** The ACP harness Brain ran this call itself. */
  harness: boolean;
  input: Record<string, unknown>;
  permission: "allow" | "ask" | "deny" | null;
  confirmation: { result: "allow" | "deny"; denyMessage: string | null } | null;
  result: { text: string; isError: boolean } | null;
}

export interface ModelRow {
  kind: "model";
  id: string;
  at: string | null;
  provider: string | null;
  model: string | null;
  ended: { isError: boolean; inputTokens: number; outputTokens: number } | null;
}

/** A message between threads: a task sent to a child, or a message (a task, an answer) received. */
export interface ThreadMessageRow {
  kind: "thread_message";
  id: string;
  at: string | null;
  direction: "sent" | "received";
  peerThread: string;
  /** The other thread's agent name when the event carries it. */
  peerName: string | null;
  text: string;
}

export type TranscriptRow =
  | { kind: "message"; id: string; at: string | null; role: "user" | "agent" | "system"; text: string }
  | { kind: "thinking"; id: string; at: string | null }
  | ToolRow
  | ModelRow
  | { kind: "status"; id: string; at: string | null; text: string }
  | ThreadMessageRow
  | { kind: "error"; id: string; at: string | null; errorType: string; message: string; retryStatus: string }
  | { kind: "other"; id: string; at: string | null; type: string };

export function transcriptRows(events: readonly SessionEvent[]): TranscriptRow[] {
  const rows: TranscriptRow[] = [];
  const tools = new Map<string, ToolRow>();
  const models = new Map<string, ModelRow>();
  // Workflow runs and their phases by id, named as their creation event names them.
  const names = new Map<string, string>();
  for (const event of events) {
    const at = event.processed_at ?? null;
    switch (event.type) {
      case "user.message":
        rows.push({ kind: "message", id: event.id, at, role: "user", text: contentText(event.content) });
        break;
      case "agent.message":
        rows.push({ kind: "message", id: event.id, at, role: "agent", text: contentText(event.content) });
        break;
      case "system.message":
        rows.push({ kind: "message", id: event.id, at, role: "system", text: contentText(event.content) });
        break;
      case "agent.thinking":
        rows.push({ kind: "thinking", id: event.id, at });
        break;
      case "agent.tool_use":
      case "agent.mcp_tool_use":
      case "agent.custom_tool_use": {
        const row: ToolRow = {
          kind: "tool",
          id: event.id,
          at,
          name: event.name,
          executor:
            event.type === "agent.tool_use"
              ? "server"
              : event.type === "agent.mcp_tool_use"
                ? "mcp"
                : "client",
          mcpServer: event.type === "agent.mcp_tool_use" ? event.mcp_server_name : null,
          harness: (event as typeof event & HarnessToolFields).awaken_harness === true,
          input: event.input,
          permission: event.type === "agent.custom_tool_use" ? null : (event.evaluated_permission ?? null),
          confirmation: null,
          result: null,
        };
        tools.set(event.id, row);
        rows.push(row);
        break;
      }
      case "user.tool_confirmation": {
        const row = tools.get(event.tool_use_id);
        const confirmation = { result: event.result, denyMessage: event.deny_message ?? null };
        if (row) row.confirmation = confirmation;
        else rows.push({ kind: "other", id: event.id, at, type: event.type });
        break;
      }
      case "agent.tool_result":
      case "user.tool_result":
      case "agent.mcp_tool_result":
      case "user.custom_tool_result": {
        const callId =
          event.type === "agent.mcp_tool_result"
            ? event.mcp_tool_use_id
            : event.type === "user.custom_tool_result"
              ? event.custom_tool_use_id
              : event.tool_use_id;
        const result = { text: contentText(event.content), isError: event.is_error === true };
        const row = tools.get(callId);
        if (row) row.result = result;
        else rows.push({ kind: "other", id: event.id, at, type: event.type });
        break;
      }
      case "span.model_request_start": {
        const fields = event as typeof event & ModelRequestFields;
        const row: ModelRow = {
          kind: "model",
          id: event.id,
          at,
          provider: fields.provider ?? null,
          model: fields.model ?? null,
          ended: null,
        };
        models.set(event.id, row);
        rows.push(row);
        break;
      }
      case "span.model_request_end": {
        const fields = event as typeof event & ModelRequestFields;
        const row = models.get(event.model_request_start_id);
        const ended = {
          isError: event.is_error === true,
          inputTokens: event.model_usage.input_tokens,
          outputTokens: event.model_usage.output_tokens,
        };
        if (row) {
          row.ended = ended;
          row.provider ??= fields.provider ?? null;
          row.model ??= fields.model ?? null;
        } else {
          rows.push({ kind: "model", id: event.id, at, provider: null, model: null, ended });
        }
        break;
      }
      case "session.error":
        rows.push({
          kind: "error",
          id: event.id,
          at,
          errorType: event.error.type,
          message: event.error.message,
          retryStatus: event.error.retry_status.type,
        });
        break;
      case "session.status_running":
        rows.push({ kind: "status", id: event.id, at, text: "Running" });
        break;
      case "session.status_idle":
        rows.push({ kind: "status", id: event.id, at, text: `Idle: ${event.stop_reason.type}` });
        break;
      case "session.status_rescheduled":
        rows.push({ kind: "status", id: event.id, at, text: "Rescheduling after a transient error" });
        break;
      case "session.status_terminated":
        rows.push({ kind: "status", id: event.id, at, text: "Terminated" });
        break;
      case "user.interrupt":
        rows.push({ kind: "status", id: event.id, at, text: "Interrupted by a user" });
        break;
      case "agent.thread_context_compacted":
        rows.push({ kind: "status", id: event.id, at, text: "Context compacted: older turns summarized" });
        break;
      case "agent.thread_message_sent":
        rows.push({
          kind: "thread_message",
          id: event.id,
          at,
          direction: "sent",
          peerThread: event.to_session_thread_id,
          peerName: event.to_agent_name ?? null,
          text: contentText(event.content),
        });
        break;
      case "agent.thread_message_received":
        rows.push({
          kind: "thread_message",
          id: event.id,
          at,
          direction: "received",
          peerThread: event.from_session_thread_id,
          peerName: event.from_agent_name ?? null,
          text: contentText(event.content),
        });
        break;
      case "session.thread_created":
        rows.push({ kind: "status", id: event.id, at, text: `Thread created: ${event.agent_name}` });
        break;
      case "session.thread_status_running":
      case "session.thread_status_idle":
      case "session.thread_status_rescheduled":
      case "session.thread_status_terminated":
        rows.push({
          kind: "status",
          id: event.id,
          at,
          text: `Thread ${event.agent_name} ${event.type.slice("session.thread_status_".length)}`,
        });
        break;
      case "user.define_outcome":
        rows.push({ kind: "status", id: event.id, at, text: `Outcome defined: ${event.description}` });
        break;
      case "span.outcome_evaluation_start":
        rows.push({
          kind: "status",
          id: event.id,
          at,
          text: `Grader evaluating iteration ${event.iteration}`,
        });
        break;
      case "span.outcome_evaluation_ongoing":
        // Heartbeats of an evaluation already shown as started: the outcomes panel counts them.
        break;
      case "span.outcome_evaluation_end":
        rows.push({
          kind: "status",
          id: event.id,
          at,
          text: `Verdict on iteration ${event.iteration}: ${verdictWords(event.result)}`,
        });
        break;
      case "workflow_run.created":
        names.set(event.workflow_run_id, event.name);
        for (const phase of event.phases) names.set(phase.id, phase.name);
        rows.push({ kind: "status", id: event.id, at, text: `Workflow run created: ${event.name}` });
        break;
      case "workflow_run.status_running":
      case "workflow_run.status_idle":
      case "workflow_run.status_ended": {
        const run = names.get(event.workflow_run_id) ?? event.workflow_run_id;
        const status = event.type.slice("workflow_run.status_".length);
        rows.push({ kind: "status", id: event.id, at, text: `Workflow run ${run} ${status}` });
        break;
      }
      case "workflow_run.phase_started":
      case "workflow_run.phase_ended": {
        const phase = names.get(event.workflow_run_phase_id) ?? event.workflow_run_phase_id;
        const mark = event.type === "workflow_run.phase_started" ? "started" : "ended";
        rows.push({ kind: "status", id: event.id, at, text: `Phase ${phase} ${mark}` });
        break;
      }
      case "workflow_run.error":
        rows.push({
          kind: "error",
          id: event.id,
          at,
          errorType: event.error.type,
          message: event.error.message,
          retryStatus: "workflow run",
        });
        break;
      case "session.usage":
        // Cumulative totals: the session header shows the latest, the transcript need not.
        break;
      default:
        rows.push({ kind: "other", id: event.id, at, type: event.type });
    }
  }
  return rows;
}
