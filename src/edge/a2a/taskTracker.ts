import type {
  CommittedTypedFact,
  IdleReason,
  ThreadTransition,
  ToolCall,
} from "../../coordinator/factVocabulary.js";

/** A task's state as this edge names it; `a2aWire.ts` maps it to the protocol's enum. */
export type TaskStateName = "submitted" | "working" | "input-required" | "completed" | "failed" | "canceled";

/** A call the task waits on a person or a client for: a custom tool's result or an approval. */
export interface AskedCall {
  call: ToolCall;
  answer: "result" | "confirmation";
}

const TERMINAL: ReadonlySet<TaskStateName> = new Set(["completed", "failed", "canceled"]);

export const isTerminal = (state: TaskStateName): boolean => TERMINAL.has(state);
/** A task at rest: nothing more happens until someone answers it (or never, when terminal). */
export const isResting = (state: TaskStateName): boolean => isTerminal(state) || state === "input-required";

/**
 * Folds one turn's committed facts into its task state. The same fold serves a stored task (every
 * fact of its range) and a live one (fed as the tail commits): both read committed facts only, so
 * a task looks the same however it is read. A terminal state never changes again.
 */
export class TaskTracker {
  state: TaskStateName = "submitted";
  /** What the task waits for while `input-required`, in call order. */
  asked: AskedCall[] = [];
  /** Why the task failed, safe to show. */
  failure: string | null = null;
  /** The fact that last changed the state (its id names the status message). */
  stateFact: CommittedTypedFact | null = null;
  updatedAt = 0;
  private readonly calls = new Map<string, ToolCall>();
  private readonly confirmed = new Set<string>();
  private readonly answered = new Set<string>();
  /** The subagent thread each cross-posted call waits in (its answer lands there, not here). */
  private readonly askedBy = new Map<string, string>();
  private interrupted = false;
  private lastError: string | null = null;

  /** Feeds the next fact of the task's range; returns whether the state changed. */
  observe(fact: CommittedTypedFact): boolean {
    this.updatedAt = fact.createdAt;
    if (isTerminal(this.state)) return false;
    const before = this.state;
    switch (fact.kind) {
      case "status_running":
        this.interrupted = false;
        this.lastError = null;
        this.state = "working";
        break;
      case "tool_call":
        this.calls.set(fact.call.id, fact.call);
        break;
      case "thread_ask":
        // A subagent's call waiting for the client: asked like the agent's own, answered by its id.
        this.calls.set(fact.call.id, fact.call);
        this.askedBy.set(fact.call.id, fact.thread);
        break;
      case "thread_status":
        this.threadStatus(fact.thread, fact.transition);
        break;
      case "tool_confirmation":
        this.confirmed.add(fact.callId);
        this.settleAsked();
        break;
      case "tool_result":
        this.answered.add(fact.callId);
        this.settleAsked();
        break;
      case "interrupt":
        this.interrupted = true;
        break;
      case "error":
        this.lastError = fact.message;
        break;
      case "status_idle":
        this.idle(fact.reason);
        break;
      case "status_terminated":
      case "session_deleted":
        this.state = "failed";
        this.failure = "The task's session has ended.";
        break;
      default:
        break;
    }
    if (this.state === before) return false;
    this.stateFact = fact;
    return true;
  }

  /** The range ended (a later user message opened another task) without the turn coming to rest. */
  close(): void {
    if (!isResting(this.state)) this.state = "completed";
  }

  private idle(reason: IdleReason): void {
    switch (reason.kind) {
      case "turn_ended":
        this.state = this.interrupted ? "canceled" : "completed";
        return;
      case "waiting":
        this.asked = reason.callIds.flatMap((id): AskedCall[] => {
          const call = this.calls.get(id);
          if (!call) return [];
          if (call.executor === "client") return this.answered.has(id) ? [] : [{ call, answer: "result" }];
          if (call.permission?.decision === "ask" && !this.confirmed.has(id))
            return [{ call, answer: "confirmation" }];
          // An allowed call of a self-hosted environment waits for its worker, not for this client.
          return [];
        });
        this.state = this.asked.length > 0 ? "input-required" : "working";
        return;
      case "retries_exhausted":
        this.state = "failed";
        this.failure = this.lastError ?? "The turn failed and its retries are exhausted.";
        return;
      case "budget_reached":
        this.state = "failed";
        this.failure = "The session's list cost reached its budget: raise the budget to continue.";
        return;
      default:
        this.state = "completed";
    }
  }

  /**
   * A subagent parked on the client asks like the agent's own waiting idle; once it runs again (or
   * ends), its asks were answered on its thread, and with nothing left asked the task works again.
   */
  private threadStatus(thread: string, transition: ThreadTransition): void {
    if (transition.to === "idle" && transition.reason.kind === "waiting") {
      const others = this.asked.filter((a) => this.askedBy.get(a.call.id) !== thread);
      this.idle(transition.reason);
      this.asked = [...others, ...this.asked];
      this.state = this.asked.length > 0 ? "input-required" : "working";
      return;
    }
    if (this.state !== "input-required") return;
    this.asked = this.asked.filter((a) => this.askedBy.get(a.call.id) !== thread);
    if (this.asked.length === 0) this.state = "working";
  }

  /** An answer arrived: once every asked call has one, the run resumes and the task works again. */
  private settleAsked(): void {
    if (this.state !== "input-required") return;
    this.asked = this.asked.filter((a) =>
      a.answer === "result" ? !this.answered.has(a.call.id) : !this.confirmed.has(a.call.id),
    );
    if (this.asked.length === 0) this.state = "working";
  }
}
