import type { JsonObject, JsonValue } from "../kernel/json.js";
import type { SessionUsage } from "./facts.js";

/**
 * The product's own history vocabulary: what a committed fact means, with no protocol's field
 * names in it. Stored rows keep their encoding (see `factCodec.ts`); everything that reasons about
 * history — input rules, the session projection, the runtime, every edge — reads these shapes.
 */

/** Who runs a tool call: this server's Hand tools, the client (custom tools), or an MCP server. */
export type ToolExecutor = "server" | "client" | "mcp";

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
  /** A stop reason this build does not know (kept so a replay never drops it). */
  | { kind: "other"; type: string };

/** A tool result's optional fields (see `unset`). */
export type ResultField = "content" | "isError";

export type RetryStatus = "retrying" | "exhausted" | "terminal";

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
    }
  | { kind: "tool_confirmation"; callId: string; allowed: boolean; denyMessage: string | null }
  /** `targetThread`: the thread the client named, kept as given (one thread per session today). */
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
  | { kind: "usage"; usage: SessionUsage }
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
  | { kind: "session_updated"; changes: JsonObject }
  | { kind: "session_deleted" }
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
