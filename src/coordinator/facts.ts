import type { JsonObject } from "../kernel/json.js";

/**
 * A fact is one entry of a thread's committed history, as stored: its `type` and `body` are the
 * stored encoding, which only the fact codec (`factCodec.ts`) reads and writes. Everything else
 * reads `TypedFact` (`factVocabulary.ts`); edges project typed facts to their protocol's DTOs.
 */
export interface Fact {
  id: string;
  type: string;
  body: JsonObject;
}

export interface CommittedFact extends Fact {
  sessionId: string;
  threadId: string;
  /** Position in the thread: the thread version right after this fact was appended (1-based). */
  seq: number;
  createdAt: number;
}

export type SessionStatus = "idle" | "running" | "rescheduling" | "terminated";

/**
 * The answer a client owes, one per tool use the run is parked on: the result of a client (custom)
 * tool call, the result of a built-in call the client runs (a self-hosted worker), or a verdict on
 * a gated call. Stored under other names: see `facts/pendingCodec.ts`.
 */
export type AnswerKind = "client_tool_result" | "server_tool_result" | "confirmation" | "thread_answer";

/** Who runs a gated call once it is allowed: this server, or the client, which then owes its result. */
export type AfterAllow = "server" | "client";

export interface PendingAction {
  /**
   * The id of the tool call fact that waits for an answer (a client call, or a built-in one); for
   * `thread_answer`, the child thread whose answer the spawning run waits for (no client answers it).
   */
  eventId: string;
  kind: AnswerKind;
  /** For a confirmation: who runs the tool once allowed (`client`: a self-hosted worker). */
  afterAllow?: AfterAllow;
  /** The call is an MCP call: its denial is an MCP result. */
  mcp?: true;
  /** The call is an ACP harness's own: its denial is a harness result. */
  harness?: true;
}

/** The resume ticket's internal fact (see `facts/internalFacts.ts`). */
export { TOOL_AWAITS } from "./facts/internalFacts.js";

/** Tokens a session's model requests used. Stored under other names: see `facts/usageCodec.ts`. */
export interface SessionUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export const EMPTY_USAGE: SessionUsage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};

/**
 * What a session's committed facts add up to besides tokens: the list cost its budget is measured
 * against and the time it spent running. Stored with the usage: see `facts/meterCodec.ts`.
 */
export interface SessionMeter {
  /**
   * The list cost of its committed model requests in nano-cents (`kernel/listPrices.ts`), as a
   * decimal string; null once a request ran on a model without a list price (nothing can measure it).
   */
  listCost: string | null;
  /** Time spent in `running` status, up to the last time it left it (ms). */
  activeMs: number;
  /** When the current `running` stretch began (the commit that made it running); null otherwise. */
  runningSince: number | null;
  /** When the session terminated: its duration stops there. */
  endedAt: number | null;
}

export const EMPTY_METER: SessionMeter = { listCost: "0", activeMs: 0, runningSince: null, endedAt: null };

/**
 * Facts the runtime needs for recovery but no protocol shows (e.g. "this tool call started,
 * attempt 2"). They hold a thread version like any fact; edges skip them when projecting.
 */
export const INTERNAL_FACT_PREFIX = "awaken.";

export function isInternalFact(type: string): boolean {
  return type.startsWith(INTERNAL_FACT_PREFIX);
}
