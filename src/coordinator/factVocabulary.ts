import type { JsonObject, JsonValue } from "../kernel/json.js";
import type { SessionUsage } from "./facts.js";

/**
 * The product's own history vocabulary: what a committed fact means, with no protocol's field
 * names in it. Stored rows keep their encoding (see `factCodec.ts`); everything that reasons about
 * history — input rules, the session projection, the runtime, every edge — reads these shapes.
 */

/**
 * Who runs a tool call: this server's Hand tools, the client (custom tools), an MCP server, or an
 * ACP harness that is the agent's Brain (it runs its own tools; the server records and gates them).
 */
export type ToolExecutor = "server" | "client" | "mcp" | "harness";

/** The permission gate's verdict on a server or MCP call, committed with the call. */
export interface PermissionVerdict {
  decision: "allow" | "ask" | "deny";
  /** The gate's explanation as stored (policy, reason); edges show it, nothing branches on it. */
  evaluation: JsonObject | null;
}

/** One tool call, whichever executor answers it. `id` is the fact id: the id every client answers. */
export interface ToolCall {
  id: string;
  name: string;
  input: JsonObject;
  executor: ToolExecutor;
  /** The MCP server a call goes to (executor `mcp` only). */
  mcpServer?: string;
  /** Absent for client calls: nothing gates a custom tool. */
  permission?: PermissionVerdict;
}

/** Content blocks as the client sent them or the tool returned them (text, image, document). */
export type ContentBlock = JsonObject;

/**
 * Why a session went idle. `turn_ended`: the turn is over (answered, or interrupted); `waiting`
 * lists the call ids a client must answer, in call order.
 */
export type IdleReason =
  | { kind: "turn_ended" }
  | { kind: "waiting"; callIds: string[] }
  | { kind: "retries_exhausted" }
  | { kind: "refusal" }
  /** The session's list cost reached its budget (or it used a model the budget cannot price). */
  | { kind: "budget_reached" }
  /** A stop reason this build does not know (kept so a replay never drops it). */
  | { kind: "other"; type: string };

/** A tool result's optional fields (see `unset`). */
export type ResultField = "content" | "isError";

export type RetryStatus = "retrying" | "exhausted" | "terminal";

/**
 * A thread's status change, as its parent's history shows it (a child thread's own history carries
 * the ordinary status facts). The same states as a session's, `idle` with its reason.
 */
export type ThreadTransition =
  | { to: "running" }
  | { to: "idle"; reason: IdleReason }
  | { to: "rescheduled" }
  | { to: "terminated" };

/** A phase a workflow run's plan declares (its id is derived from the run's and its position). */
export interface WorkflowPhase {
  id: string;
  name: string;
  description: string | null;
}

/** Why a workflow run did not finish, or was not created (the SDK's error types). */
export interface WorkflowRunError {
  type:
    | "timeout_error"
    | "program_error"
    | "unknown_error"
    | "thread_limit_error"
    | "max_workflow_runs_error";
  /** Written by the server; never content from the run or its agents. */
  message: string;
}

/** How a workflow run ended: its plan finished, it failed, or its agent (or the user) stopped it. */
export type WorkflowRunResult =
  | { type: "completed" }
  | { type: "stopped" }
  | { type: "error"; error: WorkflowRunError };

/** One change of a workflow run, as the wire's `workflow_run.*` events name them. */
export type WorkflowRunChange =
  | { type: "created"; name: string; description: string | null; phases: WorkflowPhase[] }
  | { type: "status_running" }
  | { type: "status_idle" }
  | { type: "status_ended"; result: WorkflowRunResult }
  | { type: "error"; error: WorkflowRunError }
  | { type: "phase_started"; phase: string }
  | { type: "phase_ended"; phase: string; startedId: string };

/**
 * A grader's verdict on one attempt at an outcome. `needs_revision` sends the agent back to work;
 * the others end the outcome (`max_iterations_reached` after one last acknowledgment turn).
 */
export type OutcomeVerdict =
  | "satisfied"
  | "needs_revision"
  | "max_iterations_reached"
  | "failed"
  | "interrupted";

/** An outcome's rubric as the grader reads it: a file rubric is resolved to its text on acceptance. */
export interface OutcomeRubric {
  content: string;
  /** The uploaded file the text was read from, when the client gave a file rubric. */
  fileId?: string;
}

export type FactPayload =
  /**
   * `clientMessageId` is the id a UI client gave the message (AI SDK, AG-UI): those clients re-send
   * their whole list, and the id is how an edge knows a message is already in the history.
   * `clientMetadata` is the metadata a UI client put on the message (AI SDK), given back on reload.
   */
  | { kind: "user_message"; content: ContentBlock[]; clientMessageId?: string; clientMetadata?: JsonValue }
  | { kind: "system_message"; content: ContentBlock[] }
  | { kind: "agent_message"; content: ContentBlock[] }
  /** The model thought before answering: a progress signal without content (its preview streamed it). */
  | { kind: "agent_thinking" }
  | { kind: "tool_call"; call: ToolCall }
  /**
   * A call's result. `by` says who produced it: the server (a Hand or MCP run, or a denial the
   * server wrote) or the client (a custom tool's result, a self-hosted worker's built-in result).
   */
  | {
      kind: "tool_result";
      callId: string;
      executor: ToolExecutor;
      by: "server" | "client";
      content: ContentBlock[];
      isError: boolean;
      /**
       * The optional fields a client left out of its result: they stay absent wherever the fact is
       * stored or shown, and read as no content / not an error.
       */
      unset?: ResultField[];
      /** The child thread a client's answer was routed to (committed on that thread's history). */
      thread?: string;
    }
  | {
      kind: "tool_confirmation";
      callId: string;
      allowed: boolean;
      denyMessage: string | null;
      /** The child thread the confirmation was routed to (committed on that thread's history). */
      thread?: string;
    }
  /** `targetThread`: the thread the client named (a child's, or the primary's), kept as given. */
  | { kind: "interrupt"; targetThread?: string }
  | { kind: "status_running" }
  | { kind: "status_idle"; reason: IdleReason }
  | { kind: "status_rescheduled" }
  | { kind: "status_terminated" }
  | {
      kind: "error";
      errorType: string;
      message: string;
      retryStatus: RetryStatus;
      /** Type-specific fields (e.g. the MCP server's name). */
      extra: JsonObject;
    }
  /**
   * A snapshot of the session's cumulative usage. Snapshots written since budgets exist also carry
   * the list cost in whole US cents (absent: a model without a list price was used), the running
   * time and the budget in force (its wire object, or null for none).
   */
  | {
      kind: "usage";
      usage: SessionUsage;
      listCostCents?: string;
      activeSeconds?: number;
      budget?: JsonObject | null;
    }
  | {
      kind: "model_request_start";
      provider: string;
      model: string;
      /**
       * The thread version the request was built from, when the span is committed with its answer
       * (input committed after it was not seen). Absent: the request saw everything before the span.
       */
      contextSeq?: number;
      /** When the request started (ms), when the span is committed with its answer. */
      startedAt?: number;
    }
  | {
      kind: "model_request_end";
      startId: string;
      isError: boolean;
      provider: string;
      model: string;
      usage: SessionUsage;
    }
  /**
   * A child thread was created, committed on the thread that spawned it. `agentName`: the callable
   * agent it runs; `workflowRun`: the workflow run that created it, or null.
   */
  | { kind: "thread_created"; thread: string; agentName: string; workflowRun: string | null }
  /**
   * A child thread's call that waits for a client (a permission ask, a custom tool), cross-posted
   * on the primary thread's history so the session's stream shows it. Its id is the call's: the
   * answer is routed to the child by it. Nothing waits on the primary for it.
   */
  | { kind: "thread_ask"; thread: string; call: ToolCall }
  /** A child thread's status changed, committed on its parent's history (the session sees its children). */
  | { kind: "thread_status"; thread: string; agentName: string; transition: ThreadTransition }
  /**
   * An agent sent a message to another thread (on the sender's history); `toAgentName` is null when
   * the receiver is the primary agent.
   */
  | { kind: "thread_message_sent"; toThread: string; toAgentName: string | null; content: ContentBlock[] }
  /** A message from another thread arrived (on the receiver's history); `fromAgentName` null: the primary agent. */
  | {
      kind: "thread_message_received";
      fromThread: string;
      fromAgentName: string | null;
      content: ContentBlock[];
    }
  /**
   * The thread's older history was summarized to fit the model's context window: the model's view
   * is `summary` plus the facts after `throughSeq` (the committed history itself is unchanged).
   * `usage` is what the summarization request to `model` cost.
   */
  | { kind: "context_compacted"; summary: string; throughSeq: number; model: string; usage: SessionUsage }
  | { kind: "session_updated"; changes: JsonObject }
  | { kind: "session_deleted" }
  /**
   * The client defined an outcome: `description` is the agent's task, the rubric the grader's.
   * `maxIterations` as the client sent it (null: the default).
   */
  | {
      kind: "outcome_defined";
      outcomeId: string;
      description: string;
      rubric: OutcomeRubric;
      maxIterations: number | null;
    }
  /** A grader began evaluating the agent's attempt (`iteration` is 0-based). */
  | { kind: "outcome_evaluation_start"; outcomeId: string; iteration: number }
  /** The grader is still at work (a heartbeat between start and end). */
  | { kind: "outcome_evaluation_ongoing"; outcomeId: string; iteration: number }
  /**
   * The verdict on one attempt; exactly one per start. `usage`: the grader's model requests to
   * `model` (null when no request was made: an interrupt or a crash ended the evaluation).
   */
  | {
      kind: "outcome_evaluation_end";
      outcomeId: string;
      startId: string;
      iteration: number;
      result: OutcomeVerdict;
      explanation: string;
      model: string | null;
      usage: SessionUsage;
    }
  /**
   * A workflow run changed, committed on the history of the thread whose agent started it. `run` is
   * null only on an error that kept a run from being created.
   */
  | { kind: "workflow_run"; run: string | null; change: WorkflowRunChange }
  /** Runtime bookkeeping no protocol shows (`awaken.*`): tool intents, resume tickets, sandbox facts. */
  | { kind: "internal"; type: string; body: JsonObject }
  /** A stored type this build has no codec for: carried through untouched, never reinterpreted. */
  | { kind: "unknown"; type: string; body: JsonObject };

export type FactKind = FactPayload["kind"];

/** A fact as the domain reads it: its id and what it means. */
export type TypedFact = { id: string } & FactPayload;

/** A committed fact as the domain reads it: with its place in the thread. */
export type CommittedTypedFact = TypedFact & {
  sessionId: string;
  threadId: string;
  seq: number;
  createdAt: number;
};

/** How a run's turn ended, the same for every edge. */
export type TurnEnd = "natural" | "waiting" | "error" | "interrupted";
