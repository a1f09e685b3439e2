import type { CommittedTypedFact, ContentBlock, ToolCall } from "../../coordinator/factVocabulary.js";

/** Where one call of the turn stands when the tool call answers. */
export type CallState = "done" | "denied" | "awaiting_result" | "awaiting_approval" | "incomplete";

export interface CallView {
  id: string;
  name: string;
  state: CallState;
}

/** Where a turn came to rest, as far as an MCP tool call's answer depends on it. */
export type TurnRest =
  | { kind: "ended"; stopReason: string; text: string; error: string | null; calls: CallView[] }
  | {
      kind: "waiting";
      /** Calls gated `ask` and not answered yet: the client (or another edge) decides them. */
      approvals: ToolCall[];
      /** Custom tools: only the session's client can run them. */
      clientCalls: ToolCall[];
      calls: CallView[];
    }
  | { kind: "closed" };

const RETRIES_EXHAUSTED = "The turn failed and its retries are exhausted.";
const BUDGET_REACHED =
  "The session's list cost reached its budget: raise the budget to continue (or remove it).";

/**
 * Folds one turn's committed facts (from the user message on) into what the tool call answers:
 * the last text, the calls and their confirmations, an interrupt, the last unretried failure, and
 * the idle that rests the turn. A `waiting` idle on allowed calls only (a self-hosted worker runs
 * them) is no rest: the turn goes on when the worker answers.
 */
export class TurnObserver {
  private readonly calls = new Map<string, ToolCall>();
  private readonly confirmed = new Set<string>();
  private readonly denied = new Set<string>();
  private readonly answered = new Set<string>();
  private interrupted = false;
  private failure: string | null = null;
  private lastText = "";

  observe(fact: CommittedTypedFact): TurnRest | null {
    switch (fact.kind) {
      case "agent_message": {
        const text = textOf(fact.content);
        if (text !== "") this.lastText = text;
        return null;
      }
      case "tool_call":
      // A subagent's call waiting for the client, cross-posted: decided like the agent's own.
      case "thread_ask":
        this.calls.set(fact.call.id, fact.call);
        return null;
      case "tool_confirmation":
        this.confirmed.add(fact.callId);
        if (!fact.allowed) this.denied.add(fact.callId);
        return null;
      case "tool_result":
        this.answered.add(fact.callId);
        return null;
      case "interrupt":
        this.interrupted = true;
        return null;
      case "error":
        if (fact.retryStatus !== "retrying") this.failure = fact.message;
        return null;
      case "status_running":
        this.interrupted = false;
        this.failure = null;
        return null;
      case "status_terminated":
      case "session_deleted":
        return { kind: "closed" };
      case "status_idle":
        return this.idle(fact.reason);
      case "thread_status":
        // A subagent parked on the client rests the turn as the agent's own waiting idle does.
        return fact.transition.to === "idle" && fact.transition.reason.kind === "waiting"
          ? this.idle(fact.transition.reason)
          : null;
      default:
        return null;
    }
  }

  /** The call a fact of this turn named, when it did. */
  call(id: string): ToolCall | undefined {
    return this.calls.get(id);
  }

  /** The turn's calls in call order; a denied call is "denied" though the server wrote its result. */
  private views(asked: ReadonlySet<string>, owed: ReadonlySet<string>): CallView[] {
    return [...this.calls.values()].map((call) => {
      let state: CallState = "incomplete";
      if (this.denied.has(call.id)) state = "denied";
      else if (this.answered.has(call.id)) state = "done";
      else if (owed.has(call.id)) state = "awaiting_result";
      else if (asked.has(call.id)) state = "awaiting_approval";
      return { id: call.id, name: call.name, state };
    });
  }

  private idle(reason: Extract<CommittedTypedFact, { kind: "status_idle" }>["reason"]): TurnRest | null {
    const ended = (stopReason: string, error: string | null = null): TurnRest => ({
      kind: "ended",
      stopReason,
      text: this.lastText,
      error,
      calls: this.views(new Set(), new Set()),
    });
    switch (reason.kind) {
      case "turn_ended":
        return ended(this.interrupted ? "interrupted" : "end_turn");
      case "retries_exhausted":
        return ended("retries_exhausted", this.failure ?? RETRIES_EXHAUSTED);
      case "refusal":
        return ended("refusal");
      case "budget_reached":
        return ended("budget_reached", BUDGET_REACHED);
      case "other":
        return ended(reason.type);
      case "waiting": {
        const waiting = reason.callIds.flatMap((id) => {
          const call = this.calls.get(id);
          return call ? [call] : [];
        });
        const approvals = waiting.filter(
          (c) => c.executor !== "client" && c.permission?.decision === "ask" && !this.confirmed.has(c.id),
        );
        const clientCalls = waiting.filter((c) => c.executor === "client");
        if (approvals.length === 0 && clientCalls.length === 0) return null;
        const calls = this.views(new Set(approvals.map((c) => c.id)), new Set(clientCalls.map((c) => c.id)));
        return { kind: "waiting", approvals, clientCalls, calls };
      }
    }
  }
}

export function textOf(content: readonly ContentBlock[]): string {
  return content
    .flatMap((block) => (block.type === "text" && typeof block.text === "string" ? [block.text] : []))
    .join("");
}
