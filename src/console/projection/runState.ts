/**
 * Committed session events → the state of the current Run, a pure projection. A Run starts at
 * `session.status_running` after the session was idle and ends at an idle that does not wait for
 * anyone; an idle `requires_action` is the same Run awaiting.
 */
import type { SessionEvent } from "../api/wire.js";

export interface AwaitedCall {
  id: string;
  /** What answers it: an operator's approval, a custom tool's result, a self-hosted worker's result. */
  needs: "approval" | "custom_tool_result" | "tool_result";
  name: string;
  /** The MCP server of an MCP tool call; null for the others. */
  mcpServer: string | null;
  input: Record<string, unknown>;
}

export type RunState =
  | { phase: "none" }
  | { phase: "queued"; run: number }
  | { phase: "running"; run: number; startedAt: string | null }
  | { phase: "rescheduling"; run: number }
  | { phase: "awaiting"; run: number; calls: AwaitedCall[] }
  | {
      phase: "ended";
      run: number;
      outcome: string;
      endedAt: string | null;
      /** The last error of the Run when it ended in one (retries exhausted, terminal). */
      error: { type: string; message: string } | null;
    }
  | { phase: "terminated"; run: number };

type ToolUseEvent = Extract<
  SessionEvent,
  { type: "agent.tool_use" | "agent.mcp_tool_use" | "agent.custom_tool_use" }
>;

/** What a tool use would wait for, should an idle name it: an approval, or a result. */
export function awaitedUseOf(event: ToolUseEvent): Omit<AwaitedCall, "id"> {
  if (event.type === "agent.custom_tool_use")
    return { name: event.name, needs: "custom_tool_result", mcpServer: null, input: event.input };
  return {
    name: event.name,
    needs: event.evaluated_permission === "ask" ? "approval" : "tool_result",
    mcpServer: event.type === "agent.mcp_tool_use" ? event.mcp_server_name : null,
    input: event.input,
  };
}

export function runState(events: readonly SessionEvent[]): RunState {
  let state: RunState = { phase: "none" };
  let run = 0;
  let runOpen = false;
  let lastError: { type: string; message: string } | null = null;
  const uses = new Map<string, Omit<AwaitedCall, "id">>();
  for (const event of events) {
    switch (event.type) {
      case "agent.tool_use":
      case "agent.mcp_tool_use":
      case "agent.custom_tool_use":
        uses.set(event.id, awaitedUseOf(event));
        break;
      case "user.message":
        if (!runOpen) state = { phase: "queued", run: run + 1 };
        break;
      case "session.status_running":
        if (!runOpen) {
          run += 1;
          runOpen = true;
          lastError = null;
          state = { phase: "running", run, startedAt: event.processed_at ?? null };
        } else if (state.phase !== "running") {
          state = { phase: "running", run, startedAt: event.processed_at ?? null };
        }
        break;
      case "session.status_rescheduled":
        state = { phase: "rescheduling", run };
        break;
      case "session.error":
        lastError = { type: event.error.type, message: event.error.message };
        break;
      case "session.status_idle": {
        const reason = event.stop_reason;
        if (reason.type === "requires_action") {
          const calls = reason.event_ids.map((id): AwaitedCall => {
            const use = uses.get(id);
            return use
              ? { id, ...use }
              : { id, needs: "tool_result", name: "unknown tool", mcpServer: null, input: {} };
          });
          state = { phase: "awaiting", run, calls };
        } else {
          runOpen = false;
          state = {
            phase: "ended",
            run,
            outcome: reason.type,
            endedAt: event.processed_at ?? null,
            error: reason.type === "end_turn" ? null : lastError,
          };
        }
        break;
      }
      case "user.tool_confirmation":
      case "user.custom_tool_result":
      case "user.tool_result": {
        if (state.phase !== "awaiting") break;
        const answered =
          event.type === "user.custom_tool_result" ? event.custom_tool_use_id : event.tool_use_id;
        const calls: AwaitedCall[] = state.calls.filter((call) => call.id !== answered);
        state =
          calls.length > 0 ? { phase: "awaiting", run, calls } : { phase: "running", run, startedAt: null };
        break;
      }
      case "session.status_terminated":
      case "session.deleted":
        runOpen = false;
        state = { phase: "terminated", run };
        break;
      default:
        break;
    }
  }
  return state;
}

/** The asks an operator can answer now: the awaited calls that wait for an approval. */
export function pendingApprovals(state: RunState): AwaitedCall[] {
  return state.phase === "awaiting" ? state.calls.filter((call) => call.needs === "approval") : [];
}

/** One line for the run state, as the session page and the list show it. */
export function describeRunState(state: RunState): string {
  switch (state.phase) {
    case "none":
      return "No run yet";
    case "queued":
      return `Run ${state.run} queued`;
    case "running":
      return `Run ${state.run} running`;
    case "rescheduling":
      return `Run ${state.run} rescheduling after a transient error`;
    case "awaiting":
      return `Run ${state.run} awaiting ${state.calls.map(describeCall).join(", ")}`;
    case "ended":
      return `Run ${state.run} ended: ${state.outcome}${state.error ? ` (${state.error.type})` : ""}`;
    case "terminated":
      return "Session terminated";
  }
}

function describeCall(call: AwaitedCall): string {
  if (call.needs === "approval") return `approval of ${call.name}`;
  if (call.needs === "custom_tool_result") return `the result of custom tool ${call.name}`;
  return `a worker's result for ${call.name}`;
}
