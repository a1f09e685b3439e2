/**
 * What the conformance scenario asks of a client protocol: the few things every edge's official
 * client can do, and what the client itself shows afterwards, in one shape for all of them.
 */

/** How a turn came to rest, as the client sees it. */
export type TurnEnd = "natural" | "waiting" | "error" | "interrupted";

/** A tool call of the current turn and where it stands for the client. */
export type ToolCallState = "done" | "denied" | "awaiting_result" | "awaiting_approval" | "incomplete";

export interface ToolCallView {
  id: string;
  name: string;
  state: ToolCallState;
}

/** What the client shows once a response ends: the turn so far (from its user message on). */
export interface TurnView {
  end: TurnEnd;
  /** The turn's last non-empty assistant text ("" when there is none). */
  text: string;
  toolCalls: ToolCallView[];
  /** The error the client was told, when `end` is "error". */
  error?: string;
}

/** One turn of a history read, as every protocol can tell it. */
export interface HistoryTurn {
  user: string;
  /** The turn's non-empty assistant texts, in order. */
  texts: string[];
  toolCalls: Array<{ id: string; name: string; answered: boolean }>;
}

export interface ProtocolDriver {
  readonly name: string;
  /**
   * Whether a client going away mid-turn interrupts the turn (AG-UI: `abortRun()` means stop), or
   * only stops its reading while the turn runs on (Managed, AI SDK).
   */
  readonly disconnectInterrupts: boolean;
  /** Sends a user message and waits for the response to end. */
  say(text: string): Promise<TurnView>;
  answerClientTool(callId: string, output: string): Promise<TurnView>;
  decide(callId: string, allowed: boolean, reason?: string): Promise<TurnView>;
  /** Sends `text`, waits until its reply streams, interrupts the turn and waits for the end. */
  interruptDuringTurn(text: string): Promise<TurnView>;
  /** Sends `text`, waits until its reply streams, then drops the connection. */
  disconnectMidTurn(text: string): Promise<void>;
  /** Comes back after `disconnectMidTurn` the protocol's way; the view once that response ends. */
  reconnect(): Promise<TurnView>;
  /** The session's history through this protocol's own read; absent when it has none (MCP). */
  history?(): Promise<HistoryTurn[]>;
  close(): Promise<void>;
}
