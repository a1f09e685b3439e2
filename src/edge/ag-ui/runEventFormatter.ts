import { type AGUIEvent, EventType } from "@ag-ui/core";
import type { CommittedTypedFact, ToolCall } from "../../coordinator/factVocabulary.js";
import type { LiveEvidence } from "../../coordinator/ports.js";
import { AssistantCursor } from "./assistantCursor.js";
import { contentText, toolResultText } from "./contentText.js";
import { type RunEnd, runEndOfIdle } from "./runEnd.js";

type OpenPreview = "text" | "thinking" | "tool_input";

/**
 * Turns one session's tail into one AG-UI run's events, in the order the official client's
 * verifier demands: every message, reasoning span and tool call it opens is closed before the run
 * ends. Previews stream text, reasoning and tool arguments; the committed fact closes them, or
 * stands in for them whole when no preview was seen. Ids are fact ids throughout, so the live
 * events and a later MESSAGES_SNAPSHOT (see `messageProjection.ts`) name the same messages.
 */
export class RunEventFormatter {
  private readonly open = new Map<string, OpenPreview>();
  private readonly closed = new Set<string>();
  private readonly cursor = new AssistantCursor();
  private readonly calls = new Map<string, ToolCall>();
  private readonly confirmed = new Set<string>();
  private interrupted = false;
  private lastError: { type: string; message: string } | null = null;
  private lastIdle: RunEnd | null = null;

  constructor(
    private readonly threadId: string,
    private readonly runId: string,
    /** Message ids the client already holds: its own messages are not streamed back to it. */
    private readonly clientMessageIds: ReadonlySet<string>,
  ) {}

  started(): AGUIEvent {
    return { type: EventType.RUN_STARTED, threadId: this.threadId, runId: this.runId };
  }

  /** A fact from before this run: it shows nothing, but later facts are read in its light. */
  seed(fact: CommittedTypedFact): void {
    this.cursor.observe(fact);
    this.track(fact);
  }

  /** How the thread's last turn ended, for a run that adds nothing and finishes at once. */
  settledEnd(): RunEnd {
    const last = this.lastIdle;
    return last && (last.kind === "interrupt" || last.kind === "success")
      ? last
      : { kind: "success", pendingToolCallIds: [] };
  }

  preview(evidence: LiveEvidence): AGUIEvent[] {
    const id = evidence.eventId;
    if (this.closed.has(id)) return [];
    if (evidence.kind === "preview_start") {
      if (this.open.has(id)) return [];
      this.open.set(id, evidence.preview);
      return this.opening(id, evidence.preview, evidence.toolName);
    }
    const kind = this.open.get(id);
    if (kind === undefined) return []; // its start came before this run listened
    if (evidence.kind === "preview_delta")
      return evidence.text === "" ? [] : [this.delta(id, kind, evidence.text)];
    if (kind === "text") this.cursor.textAbandoned(id);
    return this.close(id);
  }

  /** The events a committed fact shows, and the run's end when the fact closes the turn. */
  fact(fact: CommittedTypedFact): { events: AGUIEvent[]; end: RunEnd | null } {
    const events = this.open.has(fact.id) ? this.close(fact.id) : [];
    const streamed = events.length > 0;
    this.cursor.observe(fact);
    const end = this.track(fact);
    switch (fact.kind) {
      case "user_message":
        if (!this.clientMessageIds.has(fact.clientMessageId ?? fact.id)) {
          events.push(...this.wholeText(fact.clientMessageId ?? fact.id, "user", contentText(fact.content)));
        }
        break;
      case "system_message":
        events.push(...this.wholeText(fact.id, "system", contentText(fact.content)));
        break;
      case "agent_message":
        if (!streamed) events.push(...this.wholeText(fact.id, "assistant", contentText(fact.content)));
        break;
      case "tool_call":
        if (!streamed) events.push(...this.wholeCall(fact.call));
        break;
      case "thread_ask":
        // A subagent's call waiting for the client: shown as a call, answered like one.
        events.push(...this.wholeCall(fact.call));
        break;
      case "tool_result":
        events.push({
          type: EventType.TOOL_CALL_RESULT,
          messageId: fact.id,
          toolCallId: fact.callId,
          content: toolResultText(fact.content),
          role: "tool",
        });
        break;
      default:
        break;
    }
    this.closed.add(fact.id);
    return { events, end };
  }

  /** Closes whatever is still open, then ends the run. */
  finish(end: RunEnd): AGUIEvent[] {
    const events = [...this.open.keys()].flatMap((id) => this.close(id));
    if (end.kind === "error") {
      events.push({ type: EventType.RUN_ERROR, message: end.message, code: end.code });
      return events;
    }
    events.push({
      type: EventType.RUN_FINISHED,
      threadId: this.threadId,
      runId: this.runId,
      outcome:
        end.kind === "interrupt"
          ? { type: "interrupt", interrupts: end.interrupts }
          : end.kind === "cancelled"
            ? { type: "cancelled" }
            : end.pendingToolCallIds.length > 0
              ? { type: "success", pendingToolCallIds: end.pendingToolCallIds }
              : { type: "success" },
    });
    return events;
  }

  /** Keeps what a turn's ending depends on; returns the end when this fact closes the turn. */
  private track(fact: CommittedTypedFact): RunEnd | null {
    switch (fact.kind) {
      case "tool_call":
      case "thread_ask":
        this.calls.set(fact.call.id, fact.call);
        return null;
      case "tool_confirmation":
        this.confirmed.add(fact.callId);
        return null;
      case "interrupt":
        this.interrupted = true;
        return null;
      case "error":
        this.lastError = { type: fact.errorType, message: fact.message };
        return null;
      case "status_running":
        this.interrupted = false;
        this.lastError = null;
        return null;
      case "status_idle": {
        const end = runEndOfIdle(fact.reason, {
          calls: this.calls,
          confirmed: this.confirmed,
          interrupted: this.interrupted,
          lastError: this.lastError,
        });
        this.lastIdle = end;
        return end;
      }
      case "thread_status": {
        // A subagent parked on the client: the run ends as on the agent's own waiting idle.
        const { transition } = fact;
        if (transition.to !== "idle" || transition.reason.kind !== "waiting") return null;
        const end = runEndOfIdle(transition.reason, {
          calls: this.calls,
          confirmed: this.confirmed,
          interrupted: false,
          lastError: null,
        });
        this.lastIdle = end;
        return end;
      }
      case "status_terminated":
      case "session_deleted":
        return {
          kind: "error",
          code: "session_terminated",
          message: "The thread's session has ended; start a new thread to continue.",
        };
      default:
        return null;
    }
  }

  private opening(id: string, kind: OpenPreview, toolName: string | undefined): AGUIEvent[] {
    if (kind === "text") {
      this.cursor.textStarted(id);
      return [{ type: EventType.TEXT_MESSAGE_START, messageId: id, role: "assistant" }];
    }
    if (kind === "thinking") {
      return [
        { type: EventType.REASONING_START, messageId: id },
        { type: EventType.REASONING_MESSAGE_START, messageId: id, role: "reasoning" },
      ];
    }
    return [
      {
        type: EventType.TOOL_CALL_START,
        toolCallId: id,
        toolCallName: toolName ?? "tool",
        parentMessageId: this.cursor.parentFor(id),
      },
    ];
  }

  private delta(id: string, kind: OpenPreview, text: string): AGUIEvent {
    if (kind === "text") return { type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: text };
    if (kind === "thinking") return { type: EventType.REASONING_MESSAGE_CONTENT, messageId: id, delta: text };
    return { type: EventType.TOOL_CALL_ARGS, toolCallId: id, delta: text };
  }

  private close(id: string): AGUIEvent[] {
    const kind = this.open.get(id);
    this.open.delete(id);
    this.closed.add(id);
    if (kind === "text") return [{ type: EventType.TEXT_MESSAGE_END, messageId: id }];
    if (kind === "thinking") {
      return [
        { type: EventType.REASONING_MESSAGE_END, messageId: id },
        { type: EventType.REASONING_END, messageId: id },
      ];
    }
    if (kind === "tool_input") return [{ type: EventType.TOOL_CALL_END, toolCallId: id }];
    return [];
  }

  private wholeText(id: string, role: "assistant" | "user" | "system", text: string): AGUIEvent[] {
    return [
      { type: EventType.TEXT_MESSAGE_START, messageId: id, role },
      ...(text === "" ? [] : [{ type: EventType.TEXT_MESSAGE_CONTENT, messageId: id, delta: text } as const]),
      { type: EventType.TEXT_MESSAGE_END, messageId: id },
    ];
  }

  private wholeCall(call: ToolCall): AGUIEvent[] {
    return [
      {
        type: EventType.TOOL_CALL_START,
        toolCallId: call.id,
        toolCallName: call.name,
        parentMessageId: this.cursor.parentFor(call.id),
      },
      { type: EventType.TOOL_CALL_ARGS, toolCallId: call.id, delta: JSON.stringify(call.input) },
      { type: EventType.TOOL_CALL_END, toolCallId: call.id },
    ];
  }
}
