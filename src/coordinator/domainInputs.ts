import type { JsonValue } from "../kernel/json.js";
import type { ContentBlock, OutcomeRubric, ResultField } from "./factVocabulary.js";

/**
 * Input a client can give a session, whichever protocol carried it. Each edge maps its wire to
 * these; `planInputs` decides what they do.
 */
export type DomainInput =
  | { kind: "message"; content: ContentBlock[]; clientMessageId?: string; clientMetadata?: JsonValue }
  | { kind: "system_message"; content: ContentBlock[] }
  /**
   * The answer to a call a client owes: a custom tool's result, or a self-hosted worker's.
   * `executor`, when given, is who the client says runs the call (a protocol that names the two
   * answers apart): an answer for a call of another executor is refused. `unset`: see the fact.
   */
  | {
      kind: "tool_result";
      callId: string;
      content: ContentBlock[];
      isError: boolean;
      executor?: "client" | "server";
      unset?: ResultField[];
    }
  | { kind: "tool_confirmation"; callId: string; allowed: boolean; denyMessage: string | null }
  /**
   * An outcome for the agent to work toward, graded against `rubric` after each attempt. The edge
   * resolves a file rubric to its text before the input reaches the session (`rubric.fileId`).
   */
  | { kind: "define_outcome"; description: string; rubric: OutcomeRubric; maxIterations: number | null }
  /**
   * `onlyWhileWorking`: a client that went away mid-turn means "stop what is running", not "drop
   * what waits for me": when no run is queued or executing (it ended, or parked on answers), the
   * interrupt is a no-op and nothing is written. Decided in the ledger's transaction, so no race.
   */
  | { kind: "interrupt"; targetThread?: string; onlyWhileWorking?: true };

/**
 * How a send is recognised as a repeat. Each edge derives the key from its own protocol (an
 * Idempotency-Key header, a client retry marker, a message id). Within `windowMs`, a send with the
 * session's most recent key gets that send's echo; with `strict`, a different body under the same
 * key is refused instead.
 */
export interface SendDedupe {
  key: string;
  strict: boolean;
  windowMs: number;
}
